import { mulberry32 } from '../seeded-random.ts'
import { kindOf } from './catalogue.ts'

/**
 * The soak's plan: when each fault starts and which one it is, drawn from the
 * seed alone, so a seed printed by a run repeats its plan. A draw picks a kind
 * first (kill-service, broker-kill, enrichment-api, partition-bridge, ...) and
 * then a target within it: kinds with many targets (nine API bursts, four
 * services) do not crowd out those with one.
 */

export interface PlannedFault {
  /** 1-based. */
  index: number
  /** From the start of the soak's traffic to this fault's planned start, ms. */
  offsetMs: number
  /** `<kind>:<target>` of the catalogue. */
  fault: string
  kind: string
  /** Draws of the seed that chose it: [gap, kind, target], for the log. */
  draws: [number, number, number]
}

export interface PlanOptions {
  seed: number
  durationMs: number
  /** Gap between two planned starts, drawn uniformly in [min, max]. Default 1-3 minutes. */
  intervalMs?: readonly [number, number]
  /** No fault is planned to start in the last `tailMs` of the soak: the last one heals and resumes inside it. Default 60 s. */
  tailMs?: number
  /** Fault names of the catalogue, in catalogue order. */
  faults: readonly string[]
}

export const DEFAULT_INTERVAL_MS: readonly [number, number] = [60_000, 180_000]
export const DEFAULT_TAIL_MS = 60_000

export function planFaults(options: PlanOptions): PlannedFault[] {
  const [min, max] = options.intervalMs ?? DEFAULT_INTERVAL_MS
  const tail = options.tailMs ?? DEFAULT_TAIL_MS
  const kinds = [...new Set(options.faults.map(kindOf))]
  if (kinds.length === 0) return []
  const random = mulberry32(options.seed)
  const plan: PlannedFault[] = []
  let offset = 0
  for (;;) {
    const g = random()
    const k = random()
    const t = random()
    offset += Math.round(min + (max - min) * g)
    if (offset > options.durationMs - tail) return plan
    const kind = kinds[Math.floor(k * kinds.length)]!
    const targets = options.faults.filter((f) => kindOf(f) === kind)
    const fault = targets[Math.floor(t * targets.length)]!
    plan.push({ index: plan.length + 1, offsetMs: offset, fault, kind, draws: [g, k, t] })
  }
}

/**
 * When a planned fault may start: at its planned time, but never before the
 * previous fault's output resumed (or its resume bound passed), so faults do
 * not overlap and each one's resume time is its own.
 */
export function startTime(soakStartedAt: number, planned: PlannedFault, previousSettledAt: number | undefined): number {
  return Math.max(soakStartedAt + planned.offsetMs, previousSettledAt ?? 0)
}
