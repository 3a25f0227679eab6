import { PipelineError } from '@tep/errors'

/**
 * Errors of transaction-ingest. Two families matter to the pipeline loop:
 * - `RawRecordError` (not retriable): this raw record can never be enriched as it
 *   is (undecodable, schema-invalid, impossible shape). It goes to the DLQ with
 *   its `code` in the headers.
 * - `SystemicLookupError` (retriable): the enrichment API or our credentials are
 *   failing for everyone. The transaction is aborted and consumption pauses; the
 *   record is never dead-lettered for it.
 */
export class IngestError extends PipelineError {}

export const RAW_ERROR_CODES = {
  /** The value is not Avro in Confluent wire format or does not decode with its writer schema. */
  undecodable: 'RAW_UNDECODABLE',
  /** The value decoded but is not a valid RawTransaction (missing field, bad type). */
  schemaInvalid: 'RAW_SCHEMA_INVALID',
  /** Both `card` and `transfer` are set. */
  cardAndTransfer: 'RAW_CARD_AND_TRANSFER',
  /** Neither `card` nor `transfer` is set. */
  noCardOrTransfer: 'RAW_NO_CARD_OR_TRANSFER',
  /** A field breaks a rule of the RawTransaction contract (e.g. `cardBin` longer than 6 digits). */
  invalidField: 'RAW_INVALID_FIELD',
  /** Building the lookup request from the record threw (a value no rule foresaw); never retried. */
  unpreparable: 'RAW_UNPREPARABLE',
  /** The API refused the record's request for its size (413, 414 or 431), also as a single call. */
  requestTooLarge: 'RAW_REQUEST_TOO_LARGE',
} as const

export type RawErrorCode = (typeof RAW_ERROR_CODES)[keyof typeof RAW_ERROR_CODES]

export class RawRecordError extends IngestError {
  constructor(
    code: RawErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, { code, retriable: false, ...options })
  }
}

/**
 * A failure that is not about one record: outage, throttling, credentials, or a
 * request our own code built wrongly (405/415). Always retriable from the loop's
 * point of view, because dead-lettering would lose records that are fine.
 */
export class SystemicLookupError extends IngestError {
  /**
   * `code` is the cause's code when it has one (ENRICHMENT_THROTTLED,
   * ENRICHMENT_UNAUTHORIZED, ...) so pauses, metrics and readiness name the real
   * reason; `details.retryAfterMs` (when the server sent Retry-After) is what the
   * pipeline's backoff uses as its floor.
   */
  constructor(
    message: string,
    options: { code?: string; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, {
      code: options.code ?? 'ENRICHMENT_SYSTEMIC_FAILURE',
      retriable: true,
      cause: options.cause,
      details: options.details ?? {},
    })
  }
}

/** The batch endpoint answered with a body that does not correlate with the request (wrong length, not an array). */
export class BatchResponseMismatchError extends IngestError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { code: 'ENRICHMENT_BATCH_RESPONSE_MISMATCH', retriable: true, details })
  }
}

/**
 * The table loader process (TableReader's `loader`) failed: it could not be
 * started, exited before handing the table over, or handed over an incomplete
 * state. Not retriable in place: the instance fails its start and is restarted.
 */
export class TableLoadError extends IngestError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, { code: 'TABLE_LOAD_FAILED', retriable: false, ...options })
  }
}

/**
 * The table checkpoint (INGEST_STATE_DIR) cannot be used: damaged, truncated,
 * of another cluster, topic or schema, or behind/ahead of the topics. Never
 * fatal: the table is loaded from the topics instead and `reason` is logged.
 */
export class CheckpointRefused extends IngestError {
  readonly reason: string
  constructor(reason: string) {
    super(`table checkpoint refused: ${reason}`, { code: 'TABLE_CHECKPOINT_REFUSED', retriable: false })
    this.reason = reason
  }
}
