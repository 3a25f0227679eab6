import { PipelineError } from '@tep/errors'

/** One or more stop steps failed; the others still ran. The process should exit non-zero. */
export class ShutdownIncompleteError extends PipelineError {
  constructor(failedSteps: string[]) {
    super(`shutdown steps failed: ${failedSteps.join(', ')} (see the "stop step failed" log lines)`, {
      code: 'SHUTDOWN_INCOMPLETE',
      retriable: false,
      details: { failedSteps },
    })
  }
}
