export { sampleToRaw } from './sample-to-raw.ts'
export type { PipelineOutcome, RawSample } from './sample-to-raw.ts'
export { generateRawEvents } from './raw-events.ts'
export type { RawEventOptions } from './raw-events.ts'
