import { PipelineError } from '@tep/errors'
import type { PipelineErrorOptions } from '@tep/errors'

/** A request for data the data set cannot produce (bad size, index out of range). */
export class SimDataError extends PipelineError {
  constructor(message: string, options: PipelineErrorOptions) {
    super(message, { retriable: false, ...options })
  }
}
