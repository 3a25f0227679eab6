import { PipelineError } from '@tep/errors'

/** An OTEL_* variable has a value this project does not understand; the process should not start half-traced. */
export class TracingConfigError extends PipelineError {
  readonly variable: string
  readonly problem: string

  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`, { code: 'TRACING_CONFIG_INVALID', retriable: false, details: { variable } })
    this.variable = variable
    this.problem = problem
  }
}
