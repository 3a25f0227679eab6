import type { KafkaLogger } from '../logger.ts'
import { backoffDelay, type RetryPolicy } from '../retry-policy.ts'
import { abortableDelay } from '../abortable-delay.ts'

export interface RecoveredEvent {
  /** What failed, e.g. "consumer stream failed". */
  reason: string
  /** Re-creations it took (1 when the first new consumer worked). */
  attempts: number
  /** From the failure until the new consumer was consuming (it then joins the group). */
  downMs: number
}

export interface ConsumerRecoveryOptions {
  logger: KafkaLogger
  policy: RetryPolicy
  random: () => number
  /** Aborted when the owner stops: the recovery gives up at its next step. */
  signal: AbortSignal
  isRunning: () => boolean
  /** Lets go of the failed consumer: waits for the transaction being committed, closes it, drops every partition. */
  quiesce: () => Promise<void>
  /** A new consumer and stream; throws while the cluster does not answer. */
  reopen: () => Promise<void>
  onFailed: (reason: string, error: unknown) => void
  onRecovered: (event: RecoveredEvent) => void
}

/**
 * Re-creates a consumer that @platformatic/kafka gave up on. The client retries
 * one request about 5 s and then fails the whole stream (`fetch failed 11
 * times`) or, after a failed rejoin, stops heartbeating and emits `error`:
 * during a broker failover (a dead leader or coordinator is replaced only
 * after the broker session timeout, 9 s by default) that leaves the instance
 * alive and consuming nothing, for good. Here the failure is reported at once
 * (readiness, metric), then the consumer is replaced, retried with the
 * pipeline's backoff for as long as it takes; a second failure while one
 * recovery runs joins it.
 */
export class ConsumerRecovery {
  readonly #options: ConsumerRecoveryOptions
  #running: Promise<void> | undefined
  #active = false

  constructor(options: ConsumerRecoveryOptions) {
    this.#options = options
  }

  /** True while the consumer is being replaced. */
  get active(): boolean {
    return this.#active
  }

  /** Reports the failure and starts replacing the consumer, unless a replacement is already under way. */
  failed(reason: string, error: unknown): void {
    const o = this.#options
    if (!o.isRunning() || this.#active) return
    this.#active = true
    o.logger.error({ err: error }, `${reason}; re-creating the consumer`)
    o.onFailed(reason, error)
    const failedAt = Date.now()
    this.#running = this.#replace(reason, failedAt).finally(() => (this.#active = false))
  }

  /** Resolves once no replacement is running (at once when none is). */
  async settled(): Promise<void> {
    await this.#running
  }

  async #replace(reason: string, failedAt: number): Promise<void> {
    const o = this.#options
    for (let attempt = 1; o.isRunning(); attempt++) {
      try {
        await o.quiesce()
        if (!o.isRunning()) return
        await o.reopen()
        const downMs = Date.now() - failedAt
        o.logger.info({ reason, attempts: attempt, downMs }, 'consumer re-created; rejoining the group')
        // Over before the new consumer's first assignment: a failure from now on is a new one.
        this.#active = false
        o.onRecovered({ reason, attempts: attempt, downMs })
        return
      } catch (err) {
        if (!o.isRunning()) return
        const delayMs = backoffDelay(o.policy, attempt, o.random)
        o.logger.warn({ err, attempt, delayMs }, 're-creating the consumer failed; will retry')
        await abortableDelay(delayMs, o.signal)
      }
    }
  }
}
