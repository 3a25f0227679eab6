import type { InjectContext } from './inject-context.ts'

/**
 * One fault, injected once and healed: the unit the chaos soak draws from
 * (`--soak`), and the building block of the rows that repeat a fault. A row
 * decides when and how often; a single fault only knows how to hurt the system
 * once and how to undo it.
 */
export interface SingleFault {
  /** Stable name, logged with every injection (e.g. `kill-service`, `partition-bridge`). */
  name: string
  /** Where it can run: one broker, a replicated cluster, or either. */
  topology: 'single' | 'cluster' | 'any'
  /**
   * Hurts the system once, keeps the fault for its set time, heals it, and
   * resolves when the fault is over (process back, network healed, API healthy).
   */
  inject(ctx: InjectContext): Promise<SingleFaultOutcome>
}

export interface SingleFaultOutcome {
  /** Epoch ms when the fault began (kill sent, rule installed). */
  startedAt: number
  /** Epoch ms when it was healed (process answering, rules removed). */
  healedAt: number
  /** What was hurt, in words, for the log and the soak's table ("kill -9 of broker 2 (leader of 4 raw partitions), down 30 s"). */
  description: string
}
