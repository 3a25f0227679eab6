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
import type { MerchantDetails, ResolvedDetails } from './merchant-details.ts'
import { minimiseRaw, minimiseRejectReason, PAN_MASKED_PATHS, type PanMaskedPath } from './minimise-raw.ts'
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
   *
   */
  enrich(raw: RawTransaction): Promise<EnrichResult> {
    return this.enrichThen(raw, (result) => result)
  }

  /**
   * `enrich`, and `finish` applied to its result in the same promise: the three steps
   * below as one `then` on the lookup's promise, and a table hit (most matches)
   * finished without another promise. The ingest's transform passes its encoding as
   * `finish` (record-transform.ts), so that a record costs one chain of promises
   * instead of one suspended async function per step (docs/DECISIONS.md, issue 36).
   * Whatever a step throws rejects the promise.
   */
  enrichThen<T>(raw: RawTransaction, finish: (result: EnrichResult) => T): Promise<T> {
    try {
      const input = this.#minimise(raw)
      // Step 2, the findBy call: throws RawRecordError at once when no request can be built.
      return this.#lookup(input).then((lookup) => {
        const result = this.#complete(input, lookup)
        return result instanceof Promise ? result.then(finish) : finish(result)
      })
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /**
   * Step 1: `raw` with card numbers masked in its free text (the same object when
   * there were none), before any request is built from it. Counts what it masked.
   */
  #minimise(raw: RawTransaction): RawTransaction {
    const input = minimiseRaw(raw)
    if (input.masked > 0) this.#onMasked?.(PAN_MASKED_PATHS.enrichmentInput, input.masked)
    return input.raw
  }

  /**
   * Step 3 (step 2 is #lookup): the enriched record of `input` (step 1's) from its lookup result: at
   * once for a rejection, a miss and a match the table answers, a promise only when
   * the details come from the API. A reject reason is masked as the input was.
   */
  #complete(input: RawTransaction, result: LookupResult): EnrichResult | Promise<EnrichResult> {
    switch (result.kind) {
      case 'rejected': {
        let reason = result.reason
        // The API's reason may echo the input: card numbers and IBANs masked.
        const masking = minimiseRejectReason(reason)
        if (masking.masked > 0) {
          reason = masking.reason
          this.#onMasked?.(PAN_MASKED_PATHS.rejectReason, masking.masked)
        }
        return {
          enriched: {
            transactionId: input.transactionId,
            raw: input,
            status: 'REJECTED',
            rejectReason: reason,
            handle: null,
            shopUid: null,
            merchantUid: null,
            shop: null,
            merchant: null,
            enrichedAt: this.#now(),
            lookup: { operation: result.operation, attempts: result.attempts, shopSource: null, merchantSource: null },
          },
          fetched: [],
        }
      }
      case 'notFound':
        return {
          enriched: {
            transactionId: input.transactionId,
            raw: input,
            status: 'NOT_FOUND',
            rejectReason: null,
            handle: result.handle,
            shopUid: null,
            merchantUid: null,
            shop: null,
            merchant: null,
            enrichedAt: this.#now(),
            lookup: { operation: result.operation, attempts: result.attempts, shopSource: null, merchantSource: null },
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
        // A table hit is not a promise: no turn of the event loop for it.
        return resolving instanceof Promise
          ? resolving.then((details) => this.#matched(input, result, details))
          : this.#matched(input, result, resolving)
      }
    }
  }

  #matched(input: RawTransaction, result: Extract<LookupResult, { kind: 'found' }>, details: ResolvedDetails): EnrichResult {
    const matched: EnrichResult = {
      enriched: {
        transactionId: input.transactionId,
        raw: input,
        status: 'MATCHED',
        rejectReason: null,
        handle: result.handle,
        shopUid: result.shopUid,
        merchantUid: details.merchantUid,
        shop: details.shop,
        merchant: details.merchant,
        enrichedAt: this.#now(),
        lookup: {
          operation: result.operation,
          attempts: result.attempts,
          shopSource: details.shopSource,
          merchantSource: details.merchantSource,
        },
      },
      fetched: details.fetched,
    }
    if (details.shopAvro !== undefined) matched.shopAvro = details.shopAvro
    if (details.merchantAvro !== undefined) matched.merchantAvro = details.merchantAvro
    return matched
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
