import { PipelineError } from '@tep/errors'
import type { RejectReason } from '@tep/schemas'
import { RAW_ERROR_CODES, RawRecordError, SystemicLookupError } from './errors.ts'

/**
 * How a failed findBy call ends for its record. The rule of ARCHITECTURE §4:
 * only a refusal of THIS record's input ends the record (REJECTED); anything
 * that would fail every record (credentials, outage, throttling, our own request
 * format) is systemic and must pause the consumer instead of writing results.
 */
export type LookupFailure =
  | { kind: 'rejected'; reason: RejectReason }
  | { kind: 'systemic'; error: SystemicLookupError }
  | { kind: 'record'; error: RawRecordError }

/** Codes of @tep/enrichment-client errors that concern the record's input only. */
const BAD_REQUEST = 'ENRICHMENT_BAD_REQUEST'
const INPUT_INVALID = 'ENRICHMENT_INPUT_INVALID'
const NOT_IMPLEMENTED = 'ENRICHMENT_NOT_IMPLEMENTED'
/**
 * 413/414/431. Record-scoped (the record goes to the DLQ) only when this request's
 * own content is large (enrichment-client error-mapping.ts); refused even as a
 * minimal request (`recordScoped: false`: a proxy's limit, an oversized token) it is
 * systemic and pauses the pipeline like an outage.
 */
export const TOO_LARGE = 'ENRICHMENT_REQUEST_TOO_LARGE'

/** Reject reason code for a 501: the variant exists in the product but is not offered to us. */
export const NOT_IMPLEMENTED_REASON = 'NOT_IMPLEMENTED'

const MAX_MESSAGE = 500

interface ApiErrorLike {
  code?: string
  message?: string
  parameter?: string
}

export function classifyLookupError(err: unknown): LookupFailure {
  if (err instanceof PipelineError) {
    const apiError = (err as { apiError?: ApiErrorLike }).apiError
    if (err.code === BAD_REQUEST && (err as { recordScoped?: boolean }).recordScoped !== false) {
      return {
        kind: 'rejected',
        reason: rejectReason(apiError?.code ?? BAD_REQUEST, apiError, err.message, 400),
      }
    }
    if (err.code === INPUT_INVALID) {
      // Refused by the client before sending: the input breaks a rule the API would enforce.
      return { kind: 'rejected', reason: rejectReason(INPUT_INVALID, undefined, err.message, null) }
    }
    if (err.code === TOO_LARGE && (err as { recordScoped?: boolean }).recordScoped !== false) {
      // Not a verdict of the API on the content: the record goes to the DLQ with
      // the status, so an operator sees which field grew past what the API takes.
      const status = (err as { status?: number }).status
      return {
        kind: 'record',
        error: new RawRecordError(
          RAW_ERROR_CODES.requestTooLarge,
          `the enrichment API refused this record's request as too large (HTTP ${status ?? '?'}): ${truncate(err.message)}`,
          { cause: err, details: { httpStatus: status } },
        ),
      }
    }
    if (err.code === NOT_IMPLEMENTED) {
      return { kind: 'rejected', reason: rejectReason(NOT_IMPLEMENTED_REASON, apiError, err.message, 501) }
    }
  }
  return { kind: 'systemic', error: toSystemic(err) }
}

/** Reason for a batch entry the API answered with `result: "invalid"`. */
export function invalidEntryReason(error: {
  code?: string | undefined
  message?: string | undefined
  parameter?: string | undefined
}): RejectReason {
  return rejectReason(error.code ?? BAD_REQUEST, error, 'the API marked this batch entry invalid', 400)
}

export function toSystemic(err: unknown): SystemicLookupError {
  if (err instanceof SystemicLookupError) return err
  const code = err instanceof PipelineError ? err.code : 'ENRICHMENT_SYSTEMIC_FAILURE'
  const message = err instanceof Error ? err.message : String(err)
  const retryAfterMs = err instanceof PipelineError ? err.details.retryAfterMs : undefined
  return new SystemicLookupError(
    `enrichment API call failed for a reason that is not about the record (${code}): ${message}`,
    {
      code,
      cause: err,
      details: { causeCode: code, ...(typeof retryAfterMs === 'number' ? { retryAfterMs } : {}) },
    },
  )
}

function truncate(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text
}

function rejectReason(
  code: string,
  apiError: ApiErrorLike | undefined,
  fallback: string,
  httpStatus: number | null,
): RejectReason {
  const text = apiError?.message ?? fallback
  const withParameter = apiError?.parameter === undefined ? text : `${text} (parameter ${apiError.parameter})`
  return {
    code,
    message:
      withParameter.length > MAX_MESSAGE ? `${withParameter.slice(0, MAX_MESSAGE - 1)}…` : withParameter,
    httpStatus,
  }
}
