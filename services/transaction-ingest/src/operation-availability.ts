import { PipelineError } from '@tep/errors'
import type { ContractDriftListener, Gauge } from '@tep/observability'

/**
 * The card lookup variants the interface description does not publish ("The
 * names and variants of the `findBy*` operations and their input parameters:
 * not shown"): the batch POSTs and the `complete` variants. A service may lack
 * any of them; the plain single lookup is what every other path falls back to.
 */
export const UNPUBLISHED_VARIANTS = {
  findByCardTransactionBatch: '/shops/findByCardTransactionBatch',
  completeFindByCardTransaction: '/shops/complete/findByCardTransaction',
  completeFindByCardTransactionBatch: '/shops/complete/findByCardTransactionBatch',
} as const

export type UnpublishedVariant = keyof typeof UNPUBLISHED_VARIANTS

/** How long a variant found missing is left alone before one call tries it again. */
export const DEFAULT_REPROBE_MS = 10 * 60_000

/** The statuses of the description's error table that say an operation is not there: 404, 405, 501. */
const MISSING_BY_CODE: Readonly<Record<string, 404 | 405 | 501>> = {
  ENRICHMENT_NOT_FOUND: 404,
  ENRICHMENT_METHOD_NOT_ALLOWED: 405,
  ENRICHMENT_NOT_IMPLEMENTED: 501,
}

/** The status when an enrichment client error says "no such operation" (or, for a 404, may say so). */
export function missingOperationStatus(err: unknown): 404 | 405 | 501 | undefined {
  return err instanceof PipelineError ? MISSING_BY_CODE[err.code] : undefined
}

/** A 404 whose API error body says that the path does not exist (the simulator's and a gateway's way). */
export function saysRouteMissing(err: unknown): boolean {
  return (err as { apiError?: { code?: string } }).apiError?.code === 'ROUTE_NOT_FOUND'
}

export interface OperationAvailabilityOptions {
  reprobeMs?: number
  now?: () => number
  onContractDrift?: ContractDriftListener
  /** 1 while a variant is remembered missing, by operation. */
  gauge?: Gauge<string>
}

/**
 * Which unpublished variants this process found missing, and when each is
 * tried again. Remembered per process (a restart probes afresh); a variant
 * found missing is used by nobody until its re-probe is due, then by exactly
 * one call (the probe): served, it is used again by all; refused again, it is
 * left alone for another interval. Each refusal counts as contract drift.
 */
export class OperationAvailability {
  readonly #retryAt = new Map<UnpublishedVariant, number>()
  readonly #reprobeMs: number
  readonly #now: () => number
  readonly #drift: ContractDriftListener | undefined
  readonly #gauge: Gauge<string> | undefined

  constructor(options: OperationAvailabilityOptions = {}) {
    const reprobeMs = options.reprobeMs ?? DEFAULT_REPROBE_MS
    if (!Number.isFinite(reprobeMs) || reprobeMs < 0)
      throw new RangeError(`reprobeMs must be a non-negative number of milliseconds, got ${reprobeMs}`)
    this.#reprobeMs = reprobeMs
    this.#now = options.now ?? Date.now
    this.#drift = options.onContractDrift
    this.#gauge = options.gauge
  }

  /** Whether a call could use the variant now (not known missing, or its re-probe due); takes nothing. */
  available(operation: UnpublishedVariant): boolean {
    const retryAt = this.#retryAt.get(operation)
    return retryAt === undefined || this.#now() >= retryAt
  }

  /**
   * Whether this call may use the variant. When the variant is known missing
   * and its re-probe is due, this call is the probe: the next one is moved a
   * whole interval on, so that concurrent calls keep to the fallback.
   */
  tryUse(operation: UnpublishedVariant): boolean {
    const retryAt = this.#retryAt.get(operation)
    if (retryAt === undefined) return true
    const now = this.#now()
    if (now < retryAt) return false
    this.#retryAt.set(operation, now + this.#reprobeMs)
    return true
  }

  /** The variant answered `status` for "no such operation": left alone until the next re-probe. */
  missing(operation: UnpublishedVariant, status: number, fallback: string): void {
    this.#retryAt.set(operation, this.#now() + this.#reprobeMs)
    this.#gauge?.set({ operation }, 1)
    try {
      this.#drift?.({
        api: 'enrichment',
        operation,
        field: UNPUBLISHED_VARIANTS[operation],
        kind: 'operation-missing',
        detail: `HTTP ${status}; ${fallback} instead, this variant tried again every ${Math.round(this.#reprobeMs / 1000)} s`,
      })
    } catch {
      // Reporting must never fail a lookup.
    }
  }

  /** The variant answered: used by every call again. */
  served(operation: UnpublishedVariant): void {
    if (this.#retryAt.size === 0 || !this.#retryAt.delete(operation)) return
    this.#gauge?.set({ operation }, 0)
  }
}
