import { randomBytes } from 'node:crypto'
import type { TopicCodec } from '@tep/kafka'
import type { Consent } from '@tep/schemas'
import type { Consumer, Kafka } from 'kafkajs'
import { decideConsentRecord } from './consent-status.ts'
import type { SyncLogger } from './consent-syncer.ts'

/**
 * Every consent's latest state, read from the whole consents topic (all
 * partitions, from the beginning, never committing), for the gateway's
 * GET/DELETE. Terminal states stick, as in the owners.
 */
export class ConsentView {
  readonly #consents = new Map<string, Consent>()
  readonly #kafka: Kafka
  readonly #topic: string
  readonly #codec: TopicCodec<Consent>
  readonly #logger: SyncLogger
  readonly #groupPrefix: string
  #consumer: Consumer | undefined
  /** partition → end offset at start still to be reached. */
  readonly #remaining = new Map<number, bigint>()
  #caughtUpWaiters: Array<() => void> = []
  #started = false

  constructor(options: {
    kafka: Kafka
    topic: string
    codec: TopicCodec<Consent>
    logger: SyncLogger
    groupPrefix: string
  }) {
    this.#kafka = options.kafka
    this.#topic = options.topic
    this.#codec = options.codec
    this.#logger = options.logger
    this.#groupPrefix = options.groupPrefix
  }

  get(consentId: string): Consent | undefined {
    return this.#consents.get(consentId)
  }

  get size(): number {
    return this.#consents.size
  }

  /** A consent written by this process: visible at once, before its record is read back. */
  apply(consent: Consent): void {
    const decision = decideConsentRecord(this.#consents.get(consent.consentId), consent)
    if (decision.action === 'apply') this.#consents.set(consent.consentId, consent)
  }

  /** True once every partition was read up to its end offset at start. */
  get caughtUp(): boolean {
    return this.#started && this.#remaining.size === 0
  }

  whenCaughtUp(): Promise<void> {
    if (this.caughtUp) return Promise.resolve()
    return new Promise((resolve) => this.#caughtUpWaiters.push(resolve))
  }

  async start(): Promise<void> {
    const admin = this.#kafka.admin()
    await admin.connect()
    try {
      for (const p of await admin.fetchTopicOffsets(this.#topic)) {
        if (BigInt(p.high) > BigInt(p.low)) this.#remaining.set(p.partition, BigInt(p.high))
      }
    } finally {
      await admin.disconnect()
    }
    // A private group per process: every instance reads every partition.
    const consumer = this.#kafka.consumer({
      groupId: `${this.#groupPrefix}-view-${randomBytes(6).toString('hex')}`,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 500,
    })
    this.#consumer = consumer
    consumer.on(consumer.events.END_BATCH_PROCESS, (e) => {
      const target = this.#remaining.get(e.payload.partition)
      if (target !== undefined && BigInt(e.payload.lastOffset) + 1n >= target) {
        this.#remaining.delete(e.payload.partition)
        this.#checkCaughtUp()
      }
    })
    await consumer.connect()
    await consumer.subscribe({ topics: [this.#topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat }) => {
        for (const message of batch.messages) {
          if (message.value === null) continue
          try {
            this.apply(await this.#codec.decode(message.value))
          } catch (err) {
            this.#logger.warn(
              { err, offset: message.offset, partition: batch.partition },
              'consent record skipped by the view',
            )
          }
        }
        await heartbeat()
      },
    })
    this.#started = true
    this.#checkCaughtUp()
  }

  #checkCaughtUp(): void {
    if (!this.caughtUp) return
    for (const w of this.#caughtUpWaiters.splice(0)) w()
  }

  async stop(): Promise<void> {
    await this.#consumer?.disconnect()
    for (const w of this.#caughtUpWaiters.splice(0)) w()
  }
}

/** What the gateway shows of a consent: never tokens, not even encrypted. */
export function publicConsent(consent: Consent): Record<string, unknown> {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
  return {
    consentId: consent.consentId,
    customerId: consent.customerId,
    status: consent.status,
    statusReason: consent.statusReason,
    scopes: consent.scopes,
    grantedAt: iso(consent.grantedAt),
    expiresAt: iso(consent.expiresAt),
    expiryNotifiedAt: iso(consent.expiryNotifiedAt),
    accounts: consent.accounts.map((a) => ({
      accountId: a.accountId,
      currency: a.currency,
      lastBookingDate: a.lastBookingDate,
      lastSyncedAt: iso(a.lastSyncedAt),
      pendingEntries: a.pendingEntryReferences.length,
    })),
    version: consent.version,
    updatedAt: iso(consent.updatedAt),
  }
}
