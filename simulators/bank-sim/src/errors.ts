import { PipelineError } from '@tep/errors'

/** One entry of the COBS error body `{ errors: [{ error, scope, parameters, message }] }`. */
export interface CobsErrorItem {
  error: string
  scope?: string | null
  parameters?: Record<string, string> | null
  message?: string | null
}

/**
 * An API answer that is an error by design (a 4xx of the COBS interfaces). The
 * route layer renders it as the COBS error body with its status; it is not a
 * failure of the simulator.
 */
export class BankApiError extends PipelineError {
  readonly status: number
  readonly items: CobsErrorItem[]
  readonly headers: Record<string, string>

  constructor(status: number, items: CobsErrorItem | CobsErrorItem[], headers: Record<string, string> = {}) {
    const list = Array.isArray(items) ? items : [items]
    const first = list[0]
    super(first?.message ?? first?.error ?? `HTTP ${status}`, { code: first?.error ?? 'BANK_API_ERROR', details: { status } })
    this.status = status
    this.items = list
    this.headers = headers
  }

  body(): { errors: CobsErrorItem[] } {
    return {
      errors: this.items.map((i) => ({ error: i.error, scope: i.scope ?? null, parameters: i.parameters ?? null, message: i.message ?? null })),
    }
  }
}

/** An OAuth endpoint error, rendered as `{ error, error_description }` (RFC 6749 §5.2). */
export class OAuthError extends PipelineError {
  readonly status: number
  readonly error: string
  readonly headers: Record<string, string>

  constructor(status: number, error: string, description: string, headers: Record<string, string> = {}) {
    super(description, { code: error.toUpperCase() })
    this.status = status
    this.error = error
    this.headers = headers
  }

  body(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.message }
  }
}

/** Invalid simulator options or admin input. */
export class BankSimConfigError extends PipelineError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'BANK_SIM_CONFIG_INVALID', details })
  }
}

export const fieldMissing = (scope: string, message = `${scope} is required`): CobsErrorItem => ({ error: 'FIELD_MISSING', scope, message })
export const fieldInvalid = (scope: string, message: string, parameters?: Record<string, string>): CobsErrorItem => ({
  error: 'FIELD_INVALID',
  scope,
  message,
  ...(parameters ? { parameters } : {}),
})
