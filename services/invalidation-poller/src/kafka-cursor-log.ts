import { createTransactionalWriter, type KafkaLogger, type TopicCodec, type TransactionalWriter, type Kafka } from '@tep/kafka'
import type { Invalidation, InvalidationCursor } from '@tep/schemas'
import type { CursorLog, StoredCursor } from './cursor.ts'
import type { FeedItem } from './page-items.ts'
import { readCursor } from './read-cursor.ts'

export interface KafkaCursorLogOptions {
  kafka: Kafka
  transactionalId: string
  feed: string
  itemsTopic: string
  cursorTopic: string
  itemCodec: TopicCodec<Invalidation>
  cursorCodec: TopicCodec<InvalidationCursor>
  logger?: KafkaLogger
  now?: () => number
  /** Kafka transaction timeout, ms; default 60 000. */
  transactionTimeoutMs?: number
}

/**
 * The cursor and the published items in Kafka: each page is ONE transaction
 * holding the page's Invalidation records and the new cursor record, so a
 * read-committed reader sees both or neither.
 *
 * The producer's transactional id is stable per feed. Connecting it fences any
 * other instance of the same poller (its open transaction is aborted, its next
 * commit fails): exactly one poller is active, and a standby takes over simply
 * by starting.
 */
export class KafkaCursorLog implements CursorLog {
  private writer: TransactionalWriter | undefined
  private readonly options: KafkaCursorLogOptions
  private readonly now: () => number

  constructor(options: KafkaCursorLogOptions) {
    this.options = options
    this.now = options.now ?? Date.now
  }

  /** Initialises the transactional producer (fencing older instances) and registers the schemas. */
  async connect(): Promise<void> {
    await Promise.all([this.options.itemCodec.register(), this.options.cursorCodec.register()])
    const writer = createTransactionalWriter(this.options.kafka, {
      transactionalId: this.options.transactionalId,
      transactionTimeoutMs: this.options.transactionTimeoutMs ?? 60_000,
      ...(this.options.logger === undefined ? {} : { logger: this.options.logger }),
    })
    try {
      // InitProducerId: the fencing step.
      await writer.start()
    } catch (err) {
      await writer.close().catch(() => undefined)
      throw err
    }
    this.writer = writer
  }

  async read(): Promise<StoredCursor | undefined> {
    if (this.writer === undefined) await this.connect()
    return readCursor({
      kafka: this.options.kafka,
      topic: this.options.cursorTopic,
      feed: this.options.feed,
      codec: this.options.cursorCodec,
    })
  }

  async commitPage(items: readonly FeedItem[], cursor: StoredCursor): Promise<void> {
    if (this.writer === undefined) await this.connect()
    const { itemCodec, cursorCodec, itemsTopic, cursorTopic } = this.options
    const seenAt = this.now()
    const itemMessages = items.map((item) => ({
      key: item.entityKey,
      value: itemCodec.encodeSync({
        itemId: item.itemId,
        level: item.level,
        type: item.type,
        entityKey: item.entityKey,
        seenAt,
        feedCurrentTime: cursor.feedCurrentTime,
      }),
    }))
    const cursorMessage = {
      key: cursor.feed,
      value: cursorCodec.encodeSync({
        feed: cursor.feed,
        lastItemId: cursor.lastItemId,
        feedCurrentTime: cursor.feedCurrentTime,
        updatedAt: cursor.updatedAt,
      }),
    }
    await this.writer!.run(async (tx) => {
      if (itemMessages.length > 0) await tx.send(itemsTopic, itemMessages)
      await tx.send(cursorTopic, [cursorMessage])
    })
  }

  async recover(): Promise<StoredCursor | undefined> {
    await this.close()
    // A new InitProducerId completes or aborts whatever the failed commit left behind.
    await this.connect()
    return this.read()
  }

  async close(): Promise<void> {
    const writer = this.writer
    this.writer = undefined
    if (writer !== undefined) await writer.close().catch(() => undefined)
  }
}
