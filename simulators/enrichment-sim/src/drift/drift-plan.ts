import { hashString, Rng } from '@tep/sim-data'

/**
 * What `--contract-drift` varies: every shape the interface description leaves
 * open on the invalidation feed, the token endpoint and the entity reads. Each
 * dimension lists its variants; the first is the shape this project modelled.
 * Per-process dimensions (a real service either refuses `level` or not) are
 * drawn once at start; per-answer ones are drawn for every answer.
 */
export const DRIFT_VARIANTS = {
  // once per process
  level: ['accepted', 'refused-named', 'refused-bare'],
  itemRange: ['modelled', 'not-found', 'top-level-strings', 'other-shape', 'refuses-from'],
  // per answer
  currentTime: ['iso-string', 'epoch-number', 'absent', 'null'],
  batchType: ['string', 'number', 'absent'],
  batchIds: ['numbers', 'numeric-strings'],
  lastId: ['number', 'string', 'absent'],
  hasMore: ['boolean', 'string', 'number', 'absent'],
  unknownFields: ['none', 'added'],
  tokenExpiresIn: ['number', 'string', 'absent'],
  tokenType: ['Bearer', 'bearer', 'absent'],
  tokenExtras: ['none', 'added', 'scope-absent'],
  entity: ['modelled', 'unknown-fields', 'optional-absent'],
} as const

export type DriftDimension = keyof typeof DRIFT_VARIANTS
export type DriftVariant<D extends DriftDimension> = (typeof DRIFT_VARIANTS)[D][number]
export type DriftOverrides = { [D in DriftDimension]?: DriftVariant<D> }

const PER_PROCESS: readonly DriftDimension[] = ['level', 'itemRange']

export interface DriftLogger {
  info(obj: object, msg: string): void
}

/**
 * The seeded source of every drift decision. Each distinct (dimension,
 * variant) drawn is logged once, so a run's log says which shapes it served;
 * the same seed gives the same sequence of draws.
 */
export class ContractDrift {
  readonly seed: string
  readonly #rng: Rng
  readonly #fixed: DriftOverrides
  readonly #logged = new Set<string>()
  readonly #logger: DriftLogger | undefined

  constructor(seed: string | number, overrides: DriftOverrides = {}, logger?: DriftLogger) {
    this.seed = String(seed)
    this.#rng = new Rng(hashString(`contract-drift:${String(seed)}`))
    this.#logger = logger
    const fixed: DriftOverrides = { ...overrides }
    for (const d of PER_PROCESS) if (fixed[d] === undefined) Object.assign(fixed, { [d]: this.#pick(d) })
    this.#fixed = fixed
  }

  #pick<D extends DriftDimension>(dimension: D): DriftVariant<D> {
    const variants = DRIFT_VARIANTS[dimension] as readonly DriftVariant<D>[]
    return variants[Math.floor(this.#rng.next() * variants.length)] as DriftVariant<D>
  }

  /** The variant for this answer (fixed ones always the same), logged the first time it is served. */
  draw<D extends DriftDimension>(dimension: D): DriftVariant<D> {
    const variant = (this.#fixed[dimension] as DriftVariant<D> | undefined) ?? this.#pick(dimension)
    const key = `${dimension}=${variant}`
    if (!this.#logged.has(key)) {
      this.#logged.add(key)
      this.#logger?.info({ seed: this.seed, dimension, variant }, `contract drift: ${key}`)
    }
    return variant
  }

  /** The variants of every dimension drawn so far (for tests and /__admin). */
  drawn(): string[] {
    return [...this.#logged]
  }
}
