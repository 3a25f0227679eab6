import type { RecordProducer, TopicCodec } from '@tep/kafka'
import type { Logger } from '@tep/observability'
import type { Invalidation } from '@tep/schemas'
import type { EntityVersions } from './entity-versions.ts'
import { EXPIRY_ITEM_ID, EXPIRY_TYPE, type EntityKind } from './refresh-input.ts'
import { selectStale } from './sweep-selection.ts'

export interface SweeperOptions {
  views: Record<EntityKind, EntityVersions>
  producer: RecordProducer
  codec: TopicCodec<Invalidation>
  topic: string
  intervalMs: number
  refreshAfterMs: number
  /** Most refresh requests per entity kind and sweep; the rest wait for the next sweep. */
  maxPerSweep: number
  logger: Logger
  now?: () => number
  onSweep?: (result: SweepResult) => void
  /**
   * Checked before each sweep; when it says false the sweeper stops until the
   * next `start()`. Default: always (invalidations disabled). With
   * invalidations enabled it is the age-bound mode (see age-bound.ts).
   */
  active?: () => boolean
  onIdle?: () => void
}

export interface SweepResult {
  requested: Record<EntityKind, number>
  stale: Record<EntityKind, number>
}

/**
 * Without invalidations the spec allows cached shop and merchant data for one
 * week at most. The sweep finds entries approaching that age and publishes a
 * refresh request for each to the invalidations topic (level shop/merchant,
 * type `expired`, item id 0). The refresher's own pipeline then re-fetches
 * them like any invalidated entity: one writer per key, coalescing, newest
 * wins, and a request that arrives after the entry was refreshed anyway
 * fetches nothing.
 */
export class Sweeper {
  private readonly options: SweeperOptions
  private timer: NodeJS.Timeout | undefined
  private running: Promise<unknown> | undefined
  private stopped = false
  private started = false

  constructor(options: SweeperOptions) {
    this.options = options
  }

  /** Sweeps now and then every interval while `active`; a no-op while already sweeping. */
  start(): void {
    if (this.started || this.stopped) return
    this.started = true
    const tick = () => {
      if (this.stopped) return
      if (this.options.active !== undefined && !this.options.active()) {
        this.started = false
        this.options.onIdle?.()
        return
      }
      this.running = this.sweepOnce()
        .catch((err: unknown) =>
          this.options.logger.warn({ err }, 'sweep failed; retrying at the next interval'),
        )
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.intervalMs)
        })
    }
    tick()
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    await this.running
  }

  async sweepOnce(): Promise<SweepResult> {
    const { views, codec, topic, refreshAfterMs, maxPerSweep, logger } = this.options
    const now = (this.options.now ?? Date.now)()
    const result: SweepResult = { requested: { shop: 0, merchant: 0 }, stale: { shop: 0, merchant: 0 } }
    const messages: { key: string; value: Buffer }[] = []
    for (const entity of ['shop', 'merchant'] as const) {
      const { keys, staleTotal } = selectStale(views[entity].live(now), now, refreshAfterMs, maxPerSweep)
      result.stale[entity] = staleTotal
      result.requested[entity] = keys.length
      for (const key of keys) {
        messages.push({
          key,
          value: await codec.encode({
            itemId: EXPIRY_ITEM_ID,
            level: entity,
            type: EXPIRY_TYPE,
            entityKey: key,
            seenAt: now,
            feedCurrentTime: null,
          }),
        })
      }
    }
    if (messages.length > 0) await this.options.producer.send(topic, messages)
    if (messages.length > 0 || result.stale.shop + result.stale.merchant > 0)
      logger.info(result, 'sweep requested refreshes of old entries')
    this.options.onSweep?.(result)
    return result
  }
}
