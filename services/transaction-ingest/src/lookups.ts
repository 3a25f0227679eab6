import type { RejectReason } from '@tep/schemas'
import { PipelineError } from '@tep/errors'
import type { BatchEntry, EnrichmentPort, FindOutcome } from './enrichment-port.ts'
import type { CardLookupInput, TransferLookup } from './lookup-input.ts'
import {
  classifyLookupError,
  invalidEntryReason,
  toSystemic,
  UNSUPPORTED_SCHEME_REASON,
} from './lookup-outcome.ts'
import type { IngestMetrics } from './metrics.ts'
import { timed } from './metrics.ts'
import { MicroBatcher } from './micro-batcher.ts'

export type LookupMode = 'single' | 'batch'

/** The answer for one record. Systemic failures are not results: they are thrown (SystemicLookupError). */
export type LookupResult =
  | { kind: 'found'; handle: string | null; shopUid: string; operation: string; attempts: number }
  | { kind: 'notFound'; handle: string | null; operation: string; attempts: number }
  | { kind: 'rejected'; reason: RejectReason; operation: string; attempts: number }

export interface LookupsOptions {
  client: EnrichmentPort
  mode: LookupMode
  /** Entries per batch call, 1..500. */
  batchMax: number
  lingerMs: number
  metrics?: IngestMetrics
}

export const MAX_BATCH_ENTRIES = 500

const OP_SINGLE = 'findByCardTransaction'
const OP_BATCH = 'findByCardTransactionBatch'
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
    return this.#batcher === undefined ? this.#single(input, 1) : this.#batcher.load(input)
  }

  async transfer(lookup: TransferLookup): Promise<LookupResult> {
    if (lookup.kind === 'unsupported') {
      return {
        kind: 'rejected',
        reason: {
          code: UNSUPPORTED_SCHEME_REASON,
          message: `transfer scheme ${JSON.stringify(lookup.scheme)} has no findByBankTransfer variant (supported: CERTIS, SEPA, UK)`,
          httpStatus: null,
        },
        operation: 'findByBankTransfer',
        attempts: 0,
      }
    }
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

  async #single(input: CardLookupInput, attempts: number): Promise<LookupResult> {
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

  /** Rejections become results; anything systemic is thrown for the pipeline to pause on. */
  #failure(err: unknown, operation: string, attempts: number): LookupResult {
    const failure = classifyLookupError(err)
    if (failure.kind === 'systemic') throw failure.error
    return { kind: 'rejected', reason: failure.reason, operation, attempts }
  }

  async #executeBatch(inputs: readonly CardLookupInput[]): Promise<Array<LookupResult | Error>> {
    this.#metrics?.batchSize.observe(inputs.length)
    let entries: BatchEntry[]
    try {
      entries = await timed(
        this.#metrics,
        OP_BATCH,
        () => this.#client.findByCardTransactionBatch([...inputs]),
        resultLabel,
      )
    } catch (err) {
      if (err instanceof PipelineError && (err.code === BAD_REQUEST || err.code === INPUT_INVALID)) {
        // The whole batch was refused (or could not be sent) because of one or more
        // entries: single calls isolate them so the good records still resolve.
        this.#metrics?.batchFallbacks.inc()
        return Promise.all(inputs.map((input) => this.#single(input, 2).catch((e: unknown) => toError(e))))
      }
      throw toSystemic(err)
    }
    if (!Array.isArray(entries) || entries.length !== inputs.length) {
      throw toSystemic(
        new Error(
          `${OP_BATCH} answered ${Array.isArray(entries) ? entries.length : typeof entries} entries for ${inputs.length} requests`,
        ),
      )
    }
    return entries.map((entry) =>
      entry.status === 'invalid'
        ? { kind: 'rejected', reason: invalidEntryReason(entry.error), operation: OP_BATCH, attempts: 1 }
        : fromOutcome(entry, OP_BATCH, 1),
    )
  }
}

function fromOutcome(outcome: FindOutcome, operation: string, attempts: number): LookupResult {
  const handle = outcome.handle ?? null
  return outcome.status === 'found'
    ? { kind: 'found', handle, shopUid: outcome.shopUid, operation, attempts }
    : { kind: 'notFound', handle, operation, attempts }
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
}
