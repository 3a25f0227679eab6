import { TopicReader, type TopicCodec, type Kafka } from '@tep/kafka'
import type { Consent } from '@tep/schemas'
import { decideConsentRecord } from './consent-status.ts'
import type { SyncLogger } from './sync-deps.ts'

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
  #reader: TopicReader | undefined
  #caughtUpWaiters: Array<() => void> = []

  constructor(options: {
    kafka: Kafka
    topic: string
    codec: TopicCodec<Consent>
    logger: SyncLogger
  }) {
    this.#kafka = options.kafka
    this.#topic = options.topic
    this.#codec = options.codec
    this.#logger = options.logger
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
    else if (decision.action === 'refuse')
      this.#logger.warn({ consentId: consent.consentId, reason: decision.reason }, 'consent record refused by the view')
  }

  /** True once every partition was read up to its end offset at start. */
  get caughtUp(): boolean {
    return this.#reader?.caughtUp ?? false
  }

  whenCaughtUp(): Promise<void> {
    if (this.caughtUp) return Promise.resolve()
    return new Promise((resolve) => this.#caughtUpWaiters.push(resolve))
  }

  async start(): Promise<void> {
    // Every instance reads every partition: no consumer group.
    const reader = new TopicReader({
      kafka: this.#kafka,
      topics: [this.#topic],
      follow: true,
      onRecords: async (batch) => {
        for (const record of batch.records) {
          if (record.value === null) continue
          try {
            this.apply(await this.#codec.decode(record.value))
          } catch (err) {
            this.#logger.warn(
              { err, offset: record.offset.toString(), partition: batch.partition },
              'consent record skipped by the view',
            )
          }
        }
      },
    })
    this.#reader = reader
    await reader.start()
    void reader.whenCaughtUp().then(() => {
      for (const w of this.#caughtUpWaiters.splice(0)) w()
    })
  }

  async stop(): Promise<void> {
    await this.#reader?.stop()
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
