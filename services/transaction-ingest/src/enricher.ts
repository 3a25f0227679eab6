import {
  rawTransactionProblems,
  type EnrichedTransaction,
  type MerchantDataFetched,
  type RawTransaction,
} from '@tep/schemas'
import type { Tracer } from '@opentelemetry/api'
import { installedTracer } from '@tep/kafka'
import { RAW_ERROR_CODES, RawRecordError } from './errors.ts'
import { cardLookupInput, transferLookup } from './lookup-input.ts'
import type { LookupResult, Lookups } from './lookups.ts'
import type { MerchantDetails } from './merchant-details.ts'
import { enrichMinimised, type PanMaskedPath } from './minimise-raw.ts'
import { tracedDetails } from './details-tracing.ts'

export interface EnrichResult {
  enriched: EnrichedTransaction
  /** Snapshots read from the API for this record, for the refresher (same transaction). */
  fetched: MerchantDataFetched[]
  /**
   * The shop and merchant as Avro bytes when the table gave them so
   * (MerchantDetails `tableHitsAsAvro`): `enriched.shop` / `enriched.merchant`
   * are null then, and the encoder embeds these (SplicingEncoder).
   */
  shopAvro?: Buffer
  merchantAvro?: Buffer
}

/**
 * Checks what Avro cannot: exactly one of card or transfer, and the field rules
 * of RawTransaction (@tep/schemas rawTransactionProblems). A record that fails
 * can never be enriched as it is: RawRecordError, which the pipeline dead-letters.
 */
export function validateRaw(raw: RawTransaction): void {
  if (raw.card !== null && raw.transfer !== null) {
    throw new RawRecordError(
      RAW_ERROR_CODES.cardAndTransfer,
      `raw transaction ${raw.transactionId} has both card and transfer set; exactly one is allowed`,
    )
  }
  if (raw.card === null && raw.transfer === null) {
    throw new RawRecordError(
      RAW_ERROR_CODES.noCardOrTransfer,
      `raw transaction ${raw.transactionId} has neither card nor transfer set; exactly one is required`,
    )
  }
  const problems = rawTransactionProblems(raw)
  if (problems.length > 0) {
    throw new RawRecordError(
      RAW_ERROR_CODES.invalidField,
      `raw transaction ${raw.transactionId} breaks the RawTransaction contract: ${problems.join('; ')}`,
      {
        details: { problems },
      },
    )
  }
}

/**
 * One raw record to one enriched record: a findBy call (never skipped), then for a
 * match the shop and merchant details. Throws SystemicLookupError (retriable) when
 * the API fails for reasons not about this record; never returns a result for it.
 */
export class Enricher {
  readonly #lookups: Lookups
  readonly #details: MerchantDetails
  readonly #now: () => number
  readonly #onMasked: ((path: PanMaskedPath, count: number) => void) | undefined
  /** Only with a tracer provider installed (@tep/tracing): then the table reads get a span each. */
  readonly #tracer: Tracer | undefined = installedTracer('@tep/transaction-ingest')

  constructor(options: {
    lookups: Lookups
    details: MerchantDetails
    now?: () => number
    /** Card numbers masked in free text or reject reasons (tep_pan_masked_total). */
    onMasked?: (path: PanMaskedPath, count: number) => void
  }) {
    this.#lookups = options.lookups
    this.#details = options.details
    this.#now = options.now ?? Date.now
    this.#onMasked = options.onMasked
  }

  /**
   * The enriched record of `raw`, its free text minimised first (minimise-raw.ts):
   * `enriched.raw` is then another object than `raw`, and the raw bytes must not be reused.
   */
  enrich(raw: RawTransaction): Promise<EnrichResult> {
    return enrichMinimised(raw, (minimised) => this.#enrich(minimised), this.#onMasked)
  }

  async #enrich(raw: RawTransaction): Promise<EnrichResult> {
    const result = await this.#lookup(raw)
    const base = { transactionId: raw.transactionId, raw }
    const lookup = { operation: result.operation, attempts: result.attempts }
    switch (result.kind) {
      case 'rejected':
        return {
          enriched: {
            ...base,
            status: 'REJECTED',
            rejectReason: result.reason,
            handle: null,
            shopUid: null,
            merchantUid: null,
            shop: null,
            merchant: null,
            enrichedAt: this.#now(),
            lookup: { ...lookup, shopSource: null, merchantSource: null },
          },
          fetched: [],
        }
      case 'notFound':
        return {
          enriched: {
            ...base,
            status: 'NOT_FOUND',
            rejectReason: null,
            handle: result.handle,
            shopUid: null,
            merchantUid: null,
            shop: null,
            merchant: null,
            enrichedAt: this.#now(),
            lookup: { ...lookup, shopSource: null, merchantSource: null },
          },
          fetched: [],
        }
      case 'found': {
        const provided =
          result.shop === undefined
            ? undefined
            : { shop: result.shop, ...(result.merchant === undefined ? {} : { merchant: result.merchant }) }
        const resolving =
          this.#tracer === undefined
            ? this.#details.resolve(result.shopUid, provided)
            : tracedDetails(this.#tracer, result.shopUid, () => this.#details.resolve(result.shopUid, provided))
        // A table hit is not a promise: no await (and no turn of the event loop) for it.
        const details = resolving instanceof Promise ? await resolving : resolving
        const matched: EnrichResult = {
          enriched: {
            ...base,
            status: 'MATCHED',
            rejectReason: null,
            handle: result.handle,
            shopUid: result.shopUid,
            merchantUid: details.merchantUid,
            shop: details.shop,
            merchant: details.merchant,
            enrichedAt: this.#now(),
            lookup: { ...lookup, shopSource: details.shopSource, merchantSource: details.merchantSource },
          },
          fetched: details.fetched,
        }
        if (details.shopAvro !== undefined) matched.shopAvro = details.shopAvro
        if (details.merchantAvro !== undefined) matched.merchantAvro = details.merchantAvro
        return matched
      }
    }
  }

  #lookup(raw: RawTransaction): Promise<LookupResult> {
    if (raw.card !== null) return this.#lookups.card(prepare(raw, () => cardLookupInput(raw, raw.card!)))
    if (raw.transfer !== null)
      return this.#lookups.transfer(prepare(raw, () => transferLookup(raw, raw.transfer!)))
    // validateRaw runs first; reaching this is a bug in the caller.
    throw new RawRecordError(
      RAW_ERROR_CODES.noCardOrTransfer,
      `raw transaction ${raw.transactionId} has neither card nor transfer set`,
    )
  }
}

/**
 * Building the request reads only this record, so whatever it throws (a
 * RangeError from a date no rule foresaw) is about this record: it goes to the
 * DLQ instead of being taken for an outage that would redo it forever.
 */
function prepare<T>(raw: RawTransaction, build: () => T): T {
  try {
    return build()
  } catch (err) {
    throw new RawRecordError(
      RAW_ERROR_CODES.unpreparable,
      `raw transaction ${raw.transactionId} cannot be turned into a lookup request: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`,
      { cause: err },
    )
  }
}
