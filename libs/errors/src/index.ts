export { PipelineError, isRetriable, errorCode } from './pipeline-error.ts'
export type { PipelineErrorOptions } from './pipeline-error.ts'
