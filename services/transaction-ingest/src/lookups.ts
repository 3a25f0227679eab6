import type { RejectReason } from '@tep/schemas'
import { PipelineError } from '@tep/errors'
import type {
  ApiMerchant,
  ApiShop,
  BatchEntry,
  CompleteBatchEntry,
  CompleteFindOutcome,
  EnrichmentPort,
  FindOutcome,
} from './enrichment-port.ts'
import type { CardLookupInput, TransferLookup } from './lookup-input.ts'
import {
  classifyLookupError,
  invalidEntryReason,
  toSystemic,
  TOO_LARGE,
} from './lookup-outcome.ts'
import type { IngestMetrics } from './metrics.ts'
import { timed } from './metrics.ts'
import { MicroBatcher } from './micro-batcher.ts'

export type LookupMode = 'single' | 'batch'

/**
 * When card lookups use the `complete` variants (the found shop and merchant in
 * the same answer): `never`, `always`, or `auto` (while the local table misses
 * often, e.g. right after a start with an empty table, so that a miss does not
 * cost two more requests per record).
 */
export type CompleteLookups = 'auto' | 'always' | 'never'

/** The answer for one record. Systemic failures are not results: they are thrown (SystemicLookupError). */
export type LookupResult =
  | {
      kind: 'found'
      handle: string | null
      shopUid: string
      operation: string
      attempts: number
      /** Present when a `complete` variant answered: the shop and merchant as of now. */
      shop?: ApiShop
      merchant?: ApiMerchant
    }
  | { kind: 'notFound'; handle: string | null; operation: string; attempts: number }
  | { kind: 'rejected'; reason: RejectReason; operation: string; attempts: number }

export interface LookupsOptions {
  client: EnrichmentPort
  mode: LookupMode
  /** Entries per batch call, 1..500. */
  batchMax: number
  lingerMs: number
  /** Default `never`. */
  complete?: CompleteLookups
  /** For `auto`: true while the table misses often enough that `complete` saves requests. */
  tableIsCold?: () => boolean
  metrics?: IngestMetrics
}

export const MAX_BATCH_ENTRIES = 500

const OP_SINGLE = 'findByCardTransaction'
const OP_BATCH = 'findByCardTransactionBatch'
const OP_COMPLETE_SINGLE = 'completeFindByCardTransaction'
const OP_COMPLETE_BATCH = 'completeFindByCardTransactionBatch'
const BAD_REQUEST = 'ENRICHMENT_BAD_REQUEST'
const INPUT_INVALID = 'ENRICHMENT_INPUT_INVALID'

const resultLabel = (err: unknown): string => (err instanceof PipelineError ? err.code : 'UNEXPECTED')

/**
 * The findBy calls of the service: one per record, never cached (spec limit 1).
 * Card lookups go one GET per record (`single`) or through one process-wide
 * micro-batcher into POST batches of up to 500 (`batch`); transfers always go
 * one call per record (the API has no batch form for them).
 */
export class Lookups {
  readonly #client: EnrichmentPort
  readonly #mode: LookupMode
  readonly #complete: CompleteLookups
  readonly #tableIsCold: () => boolean
  readonly #metrics: IngestMetrics | undefined
  readonly #batcher: MicroBatcher<CardLookupInput, LookupResult> | undefined

  constructor(options: LookupsOptions) {
    if (!Number.isInteger(options.batchMax) || options.batchMax < 1 || options.batchMax > MAX_BATCH_ENTRIES) {
      throw new RangeError(
        `batchMax must be 1..${MAX_BATCH_ENTRIES} (the API's batch limit), got ${options.batchMax}`,
      )
    }
    this.#client = options.client
    this.#mode = options.mode
    this.#complete = options.complete ?? 'never'
    this.#tableIsCold = options.tableIsCold ?? (() => false)
    this.#metrics = options.metrics
    if (options.mode === 'batch') {
      this.#batcher = new MicroBatcher({
        maxBatchSize: options.batchMax,
        lingerMs: options.lingerMs,
        execute: (inputs) => this.#executeBatch(inputs),
      })
    }
  }

  get mode(): LookupMode {
    return this.#mode
  }

  card(input: CardLookupInput): Promise<LookupResult> {
    return this.#batcher === undefined
      ? this.#single(input, 1, this.#useComplete())
      : this.#batcher.load(input)
  }

  async transfer(lookup: TransferLookup): Promise<LookupResult> {
    const operation = `findByBankTransfer/${lookup.scheme}`
    try {
      const outcome = await timed(
        this.#metrics,
        operation,
        () => this.#client.findByBankTransfer(lookup.scheme, lookup.input),
        resultLabel,
      )
      return fromOutcome(outcome, operation, 1)
    } catch (err) {
      return this.#failure(err, operation, 1)
    }
  }

  /** Dispatches a partly filled batch now (shutdown, tests). */
  flush(): void {
    this.#batcher?.flush()
  }

  #useComplete(): boolean {
    return this.#complete === 'always' || (this.#complete === 'auto' && this.#tableIsCold())
  }

  async #single(input: CardLookupInput, attempts: number, complete: boolean): Promise<LookupResult> {
    const operation = complete ? OP_COMPLETE_SINGLE : OP_SINGLE
    try {
      const outcome = await timed(
        this.#metrics,
        operation,
        () =>
          complete
            ? this.#client.completeFindByCardTransaction(input)
            : this.#client.findByCardTransaction(input),
        resultLabel,
      )
      return fromOutcome(outcome, operation, attempts)
    } catch (err) {
      return this.#failure(err, operation, attempts)
    }
  }

  /** Rejections become results; anything systemic is thrown for the pipeline to pause on. */
  #failure(err: unknown, operation: string, attempts: number): LookupResult {
    const failure = classifyLookupError(err)
    if (failure.kind !== 'rejected') throw failure.error
    return { kind: 'rejected', reason: failure.reason, operation, attempts }
  }

  async #executeBatch(inputs: readonly CardLookupInput[]): Promise<Array<LookupResult | Error>> {
    this.#metrics?.batchSize.observe(inputs.length)
    // One variant per batch, chosen when it is sent.
    const complete = this.#useComplete()
    const operation = complete ? OP_COMPLETE_BATCH : OP_BATCH
    let entries: Array<BatchEntry | CompleteBatchEntry>
    try {
      entries = await timed(
        this.#metrics,
        operation,
        () =>
          complete
            ? this.#client.completeFindByCardTransactionBatch([...inputs])
            : this.#client.findByCardTransactionBatch([...inputs]),
        resultLabel,
      )
    } catch (err) {
      if (
        err instanceof PipelineError &&
        (err.code === BAD_REQUEST || err.code === INPUT_INVALID || err.code === TOO_LARGE) &&
        // A 413/414/431 that even a small request gets is systemic: single calls would all fail too.
        (err as { recordScoped?: boolean }).recordScoped !== false
      ) {
        // The whole batch was refused (or could not be sent) because of one or more
        // entries, or was too large as a whole (413): single calls isolate them so
        // the good records still resolve and only a record too large alone fails.
        this.#metrics?.batchFallbacks.inc()
        return Promise.all(
          inputs.map((input) => this.#single(input, 2, complete).catch((e: unknown) => toError(e))),
        )
      }
      throw toSystemic(err)
    }
    if (!Array.isArray(entries) || entries.length !== inputs.length) {
      throw toSystemic(
        new Error(
          `${operation} answered ${Array.isArray(entries) ? entries.length : typeof entries} entries for ${inputs.length} requests`,
        ),
      )
    }
    return entries.map((entry) =>
      entry.status === 'invalid'
        ? { kind: 'rejected', reason: invalidEntryReason(entry.error), operation, attempts: 1 }
        : fromOutcome(entry, operation, 1),
    )
  }
}

function fromOutcome(
  outcome: FindOutcome | CompleteFindOutcome,
  operation: string,
  attempts: number,
): LookupResult {
  const handle = outcome.handle ?? null
  if (outcome.status !== 'found') return { kind: 'notFound', handle, operation, attempts }
  const result: LookupResult = { kind: 'found', handle, shopUid: outcome.shopUid, operation, attempts }
  if ('shop' in outcome && outcome.shop !== undefined) {
    result.shop = outcome.shop
    if (outcome.merchant !== undefined) result.merchant = outcome.merchant
  }
  return result
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
}
