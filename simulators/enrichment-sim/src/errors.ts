import { PipelineError } from '@tep/errors'

/** A simulator option or admin request that cannot be applied. */
export class EnrichmentSimConfigError extends PipelineError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'ENRICHMENT_SIM_CONFIG', retriable: false, details })
  }
}

/**
 * An answer of the simulated API with a non-2xx status. Thrown from handlers and
 * turned into the `{"error": {code, message, parameter}}` body of the OpenAPI document.
 */
export class ApiError extends PipelineError {
  readonly status: number
  readonly parameter: string | undefined
  readonly headers: Record<string, string>

  constructor(status: number, code: string, message: string, options: { parameter?: string; headers?: Record<string, string> } = {}) {
    super(message, { code, retriable: status >= 500 || status === 429, details: { status, ...(options.parameter === undefined ? {} : { parameter: options.parameter }) } })
    this.status = status
    this.parameter = options.parameter
    this.headers = options.headers ?? {}
  }

  body(): { error: { code: string; message: string; parameter?: string } } {
    return { error: { code: this.code, message: this.message, ...(this.parameter === undefined ? {} : { parameter: this.parameter }) } }
  }
}

/** 400 for one bad input parameter. */
export function invalidParameter(parameter: string, message: string): ApiError {
  return new ApiError(400, 'INVALID_PARAMETER', message, { parameter })
}

/** An error of the token endpoint, answered with the OAuth 2.0 body (RFC 6749 section 5.2). */
export class OAuthError extends PipelineError {
  readonly status: number
  readonly oauthCode: string
  readonly headers: Record<string, string>

  constructor(status: number, oauthCode: string, description: string, headers: Record<string, string> = {}) {
    super(description, { code: `OAUTH_${oauthCode.toUpperCase()}`, retriable: false, details: { status } })
    this.status = status
    this.oauthCode = oauthCode
    this.headers = headers
  }

  body(): { error: string; error_description: string } {
    return { error: this.oauthCode, error_description: this.message }
  }
}
