import type { RejectReason } from '@tep/schemas'
import { PipelineError } from '@tep/errors'
import type { ContractDriftListener } from '@tep/observability'
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
import { lookupTracing } from './lookup-tracing.ts'
import {
  missingOperationStatus,
  OperationAvailability,
  saysRouteMissing,
  type UnpublishedVariant,
} from './operation-availability.ts'

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
  /**
   * How long a lookup variant the service answered 404/405/501 for is left
   * alone before one call tries it again (INGEST_LOOKUP_REPROBE_INTERVAL); default 10 min.
   */
  reprobeMs?: number
  /** Told when a variant is found missing (tep_api_contract_drift_total, kind operation-missing). */
  onContractDrift?: ContractDriftListener
  now?: () => number
}

export const MAX_BATCH_ENTRIES = 500

const OP_SINGLE = 'findByCardTransaction'
const OP_BATCH = 'findByCardTransactionBatch'
const OP_COMPLETE_SINGLE = 'completeFindByCardTransaction'
const OP_COMPLETE_BATCH = 'completeFindByCardTransactionBatch'
type BatchVariant = Extract<UnpublishedVariant, typeof OP_BATCH | typeof OP_COMPLETE_BATCH>
const BATCH_STEPS_COMPLETE: readonly BatchVariant[] = [OP_COMPLETE_BATCH, OP_BATCH]
const BATCH_STEPS_PLAIN: readonly BatchVariant[] = [OP_BATCH]
/** A batch variant answered that it is not there. */
const MISSING = Symbol('missing')
const BAD_REQUEST = 'ENRICHMENT_BAD_REQUEST'
const INPUT_INVALID = 'ENRICHMENT_INPUT_INVALID'

const resultLabel = (err: unknown): string => (err instanceof PipelineError ? err.code : 'UNEXPECTED')

/**
 * The findBy calls of the service: one per record, never cached (spec limit 1).
 * Card lookups go one GET per record (`single`) or through one process-wide
 * micro-batcher into POST batches of up to 500 (`batch`); transfers always go
 * one call per record (the API has no batch form for them).
 *
 * The batch and `complete` variants are not in the interface description. One
 * the service answers 404, 405 or 501 for is remembered missing
 * (OperationAvailability) and its records go a step down, in the end to the plain
 * single lookup: never a pause, never a dead letter. It is tried again after
 * `reprobeMs`.
 */
export class Lookups {
  readonly #client: EnrichmentPort
  readonly #mode: LookupMode
  readonly #complete: CompleteLookups
  readonly #tableIsCold: () => boolean
  readonly #metrics: IngestMetrics | undefined
  readonly #batcher: MicroBatcher<CardLookupInput, LookupResult> | undefined
  readonly #variants: OperationAvailability
  /** Only with a tracer provider installed (@tep/tracing). */
  readonly #tracing = lookupTracing<CardLookupInput>()

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
    this.#variants = new OperationAvailability({
      ...(options.reprobeMs === undefined ? {} : { reprobeMs: options.reprobeMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.onContractDrift === undefined ? {} : { onContractDrift: options.onContractDrift }),
      ...(options.metrics === undefined ? {} : { gauge: options.metrics.lookupVariantsMissing }),
    })
    if (options.mode === 'batch') {
      this.#batcher = new MicroBatcher({
        maxBatchSize: options.batchMax,
        lingerMs: options.lingerMs,
        execute: (inputs) =>
          this.#tracing === undefined ? this.#executeBatch(inputs) : this.#tracing.batch(inputs, () => this.#executeBatch(inputs)),
      })
    }
  }

  get mode(): LookupMode {
    return this.#mode
  }

  card(input: CardLookupInput): Promise<LookupResult> {
    if (this.#batcher !== undefined && this.#batchAvailable()) {
      this.#tracing?.note(input)
      return this.#batcher.load(input)
    }
    return this.#single(input, 1, this.#useComplete())
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

  /** Whether a batch variant could take a record now (else it goes single at once, not via the batcher). */
  #batchAvailable(): boolean {
    return (
      this.#variants.available(OP_BATCH) ||
      (this.#complete !== 'never' && this.#variants.available(OP_COMPLETE_BATCH))
    )
  }

  /** One record on its own: the complete single lookup when wanted and not known missing, else the plain one. */
  #single(input: CardLookupInput, attempts: number, complete: boolean): Promise<LookupResult> {
    return complete && this.#variants.tryUse(OP_COMPLETE_SINGLE)
      ? this.#completeSingle(input, attempts)
      : this.#plainSingle(input, attempts)
  }

  async #plainSingle(input: CardLookupInput, attempts: number): Promise<LookupResult> {
    try {
      const outcome = await timed(
        this.#metrics,
        OP_SINGLE,
        () => this.#client.findByCardTransaction(input),
        resultLabel,
      )
      return fromOutcome(outcome, OP_SINGLE, attempts)
    } catch (err) {
      return this.#failure(err, OP_SINGLE, attempts)
    }
  }

  async #completeSingle(input: CardLookupInput, attempts: number): Promise<LookupResult> {
    let outcome: CompleteFindOutcome
    try {
      outcome = await timed(
        this.#metrics,
        OP_COMPLETE_SINGLE,
        () => this.#client.completeFindByCardTransaction(input),
        resultLabel,
      )
    } catch (err) {
      const status = missingOperationStatus(err)
      if (status === undefined) return this.#failure(err, OP_COMPLETE_SINGLE, attempts)
      // The plain lookup answers for the record. A 404 may be the variant's way of
      // saying "no shop" as well as "no such operation": when the plain lookup then
      // finds a shop (or the 404 says the path does not exist), it was the latter.
      const plain = await this.#plainSingle(input, attempts + 1)
      if (status !== 404 || plain.kind === 'found' || saysRouteMissing(err))
        this.#variants.missing(OP_COMPLETE_SINGLE, status, 'the plain single lookup')
      return plain
    }
    this.#variants.served(OP_COMPLETE_SINGLE)
    return fromOutcome(outcome, OP_COMPLETE_SINGLE, attempts)
  }

  /** Rejections become results; anything systemic is thrown for the pipeline to pause on. */
  #failure(err: unknown, operation: string, attempts: number): LookupResult {
    const failure = classifyLookupError(err)
    if (failure.kind !== 'rejected') throw failure.error
    return { kind: 'rejected', reason: failure.reason, operation, attempts }
  }

  /**
   * One batch: the complete batch when wanted, else (or when that is missing) the
   * plain batch, else one single lookup per record. A variant answered 404/405/501
   * is remembered missing and the same records go a step down at once.
   */
  async #executeBatch(inputs: readonly CardLookupInput[]): Promise<Array<LookupResult | Error>> {
    this.#metrics?.batchSize.observe(inputs.length)
    // One variant per batch, chosen when it is sent.
    const complete = this.#useComplete()
    let attempts = 1
    for (const operation of complete ? BATCH_STEPS_COMPLETE : BATCH_STEPS_PLAIN) {
      if (!this.#variants.tryUse(operation)) continue
      const results = await this.#batchCall(operation, inputs, attempts)
      if (results !== MISSING) return results
      attempts += 1
    }
    return this.#singles(inputs, attempts, complete)
  }

  #singles(inputs: readonly CardLookupInput[], attempts: number, complete: boolean): Promise<Array<LookupResult | Error>> {
    return Promise.all(inputs.map((input) => this.#single(input, attempts, complete).catch((e: unknown) => toError(e))))
  }

  async #batchCall(
    operation: BatchVariant,
    inputs: readonly CardLookupInput[],
    attempts: number,
  ): Promise<Array<LookupResult | Error> | typeof MISSING> {
    const complete = operation === OP_COMPLETE_BATCH
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
      // A batch is never "not found": any 404, 405 or 501 says the variant is not there.
      const status = missingOperationStatus(err)
      if (status !== undefined) {
        this.#variants.missing(operation, status, complete ? 'the plain batch or single lookups' : 'single lookups')
        return MISSING
      }
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
        return this.#singles(inputs, attempts + 1, complete)
      }
      throw toSystemic(err)
    }
    this.#variants.served(operation)
    if (!Array.isArray(entries) || entries.length !== inputs.length) {
      throw toSystemic(
        new Error(
          `${operation} answered ${Array.isArray(entries) ? entries.length : typeof entries} entries for ${inputs.length} requests`,
        ),
      )
    }
    return entries.map((entry) =>
      entry.status === 'invalid'
        ? { kind: 'rejected', reason: invalidEntryReason(entry.error), operation, attempts }
        : fromOutcome(entry, operation, attempts),
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
