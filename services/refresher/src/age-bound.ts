import { scanTopic, type Kafka, type TopicCodec } from '@tep/kafka'
import type { Logger } from '@tep/observability'
import type { Invalidation } from '@tep/schemas'
import { fromInvalidation } from './refresh-input.ts'

/**
 * Whether the refresher must keep entries younger than the one-week limit
 * although invalidations are enabled.
 *
 * The interface description allows caching "until invalidated" only to a
 * client that implements invalidations, and "at most one week" otherwise. An
 * invalidation item that names no entity (the feed sent only `ids`) tells the
 * refresher that something changed but not what, so for the entries the table
 * held at that moment the refresher is a client without invalidations: each
 * must be re-read before it is `maxAgeMs` old. Every entry fetched before the
 * item is at most `maxAgeMs` old by `seenAt + maxAgeMs`, and the sweep has
 * re-read it by then; so the mode lasts until `maxAgeMs` after the newest such
 * item, and ends by itself when the feed starts naming entities again.
 */
export class AgeBound {
  readonly #maxAgeMs: number
  #until = 0

  constructor(maxAgeMs: number) {
    this.#maxAgeMs = maxAgeMs
  }

  /** Records an item without an entity seen at `seenAt`; true when that starts the mode (it was off at `now`). */
  note(seenAt: number, now: number): boolean {
    const wasActive = this.active(now)
    this.#until = Math.max(this.#until, seenAt + this.#maxAgeMs)
    return !wasActive && this.active(now)
  }

  active(now: number): boolean {
    return now < this.#until
  }

  /** Epoch ms at which the mode ends (0: never started). */
  get until(): number {
    return this.#until
  }
}

export interface UnkeyedReadBackOptions {
  kafka: Kafka
  topic: string
  codec: TopicCodec<Invalidation>
  /** Read the invalidations written since this moment (now minus REFRESH_MAX_AGE). */
  from: Date
  signal: AbortSignal
  onUnkeyed: (seenAt: number, itemId: number) => void
  logger: Logger
}

/**
 * Items without a key published before a restart were consumed by the previous
 * instance; reading back the last REFRESH_MAX_AGE of the invalidations topic
 * restores the age-bound mode they set. Never rejects: a failure only means the
 * mode starts at the next such item, which is logged.
 */
export async function readBackUnkeyed(options: UnkeyedReadBackOptions): Promise<void> {
  const { codec, logger } = options
  try {
    const { records } = await scanTopic({
      kafka: options.kafka,
      topic: options.topic,
      from: options.from,
      signal: options.signal,
      onMessage: async (message) => {
        if (message.value === null) return
        const input = fromInvalidation(await codec.decode(message.value))
        if (input.kind === 'unkeyed') options.onUnkeyed(input.seenAt, input.itemId)
      },
    })
    logger.debug({ records }, 'invalidations of the last REFRESH_MAX_AGE read back')
  } catch (err) {
    logger.warn(
      { err },
      'could not read back recent invalidations for items without a key; the age-bound sweep starts at the next one',
    )
  }
}
