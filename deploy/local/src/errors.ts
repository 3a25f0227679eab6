/**
 * Errors of the local stack.
 *
 * deploy/local may import nothing of ours (docs/CONVENTIONS.md, "Layout"), so this
 * mirrors the shape of `PipelineError` from `@tep/errors` — stable `code`,
 * `retriable`, `cause`, `details` — without depending on it. Callers branch on
 * `code`, never on the message.
 */
export const LocalStackErrorCode = {
  JAVA_NOT_FOUND: 'JAVA_NOT_FOUND',
  MAVEN_NOT_FOUND: 'MAVEN_NOT_FOUND',
  MAVEN_CENTRAL_UNREACHABLE: 'MAVEN_CENTRAL_UNREACHABLE',
  FETCH_FAILED: 'FETCH_FAILED',
  RUNTIME_MISSING: 'RUNTIME_MISSING',
  PORT_BUSY: 'PORT_BUSY',
  STARTUP_FAILED: 'STARTUP_FAILED',
  STARTUP_TIMEOUT: 'STARTUP_TIMEOUT',
  INVALID_OPTION: 'INVALID_OPTION',
} as const
export type LocalStackErrorCode = (typeof LocalStackErrorCode)[keyof typeof LocalStackErrorCode]

export interface LocalStackErrorOptions {
  code: LocalStackErrorCode
  retriable?: boolean
  cause?: unknown
  /** Structured context safe to log. */
  details?: Record<string, unknown>
}

export class LocalStackError extends Error {
  readonly code: LocalStackErrorCode
  readonly retriable: boolean
  readonly details: Record<string, unknown>

  constructor(message: string, options: LocalStackErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = options.code
    this.retriable = options.retriable ?? false
    this.details = options.details ?? {}
  }

  toJSON(): Record<string, unknown> {
    return {
      ...this.details,
      name: this.name,
      code: this.code,
      message: this.message,
      retriable: this.retriable,
    }
  }
}
