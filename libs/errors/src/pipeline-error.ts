/**
 * The root of every error this project throws on purpose.
 *
 * Like KafkaJS errors, each one says whether trying again can help (`retriable`)
 * and keeps what caused it (`cause`), so that callers decide on retry, pause or
 * dead-letter from data instead of parsing messages. `code` is stable and is what
 * logs, metrics, DLQ headers and tests key on; the message is for humans.
 */
export interface PipelineErrorOptions {
  code: string
  retriable?: boolean
  cause?: unknown
  /** Structured context safe to log (never secrets). */
  details?: Record<string, unknown>
}

export class PipelineError extends Error {
  readonly code: string
  readonly retriable: boolean
  readonly details: Record<string, unknown>

  constructor(message: string, options: PipelineErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = options.code
    this.retriable = options.retriable ?? false
    this.details = options.details ?? {}
  }

  /** Details flattened for log lines; a detail named like an identity field never overrides it. */
  toJSON(): Record<string, unknown> {
    return { ...this.details, name: this.name, code: this.code, message: this.message, retriable: this.retriable }
  }
}

/** True when `err` is a PipelineError that says a retry can help. Unknown errors are not retriable. */
export function isRetriable(err: unknown): boolean {
  return err instanceof PipelineError && err.retriable
}

/** The stable code of a PipelineError, or a generic one for anything else. */
export function errorCode(err: unknown): string {
  return err instanceof PipelineError ? err.code : 'UNEXPECTED'
}
