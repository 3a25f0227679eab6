import { randomBytes } from 'node:crypto'
import type { BankClient } from '@tep/bank-client'
import { SILENT_LOGGER, type Kafka, type OutgoingMessage, type TopicCodec } from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import { exampleConsent, type Consent } from '@tep/schemas'
import { createKeyring, TokenCipher } from '@tep/token-cipher'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { DEFAULT_SYNC_SETTINGS, type SyncOutcome, type UnsavedTokens } from './sync-deps.ts'
import { consentBinding } from './consent-binding.ts'
import { createBankSyncMetrics } from './metrics.ts'
import type { BankSyncCodecs } from './owner-options.ts'
import { PartitionOwner } from './partition-owner.ts'
import { TOKEN_WRITE_RETRY_MS } from './sync-backoff.ts'

/**
 * The consents partition's transactional writer, faked: `down` stands for a broker outage
 * (every transaction fails, as the client's "initProducerId failed 11 times" does).
 */
const broker = vi.hoisted(() => ({
  down: false,
  committed: [] as Array<{ topic: string; messages: readonly OutgoingMessage[] }>,
  attempts: 0,
  closed: false,
}))

vi.mock('@tep/kafka', async (importOriginal) => {
  const original = await importOriginal<typeof import('@tep/kafka')>()
  return {
    ...original,
    createTransactionalWriter: (_kafka: unknown, options: { transactionalId: string }) => ({
      transactionalId: options.transactionalId,
      fenced: false,
      start: async () => {},
      run: async <T>(work: (tx: { send: (topic: string, m: readonly OutgoingMessage[]) => Promise<void> }) => Promise<T>) => {
        broker.attempts++
        if (broker.closed) throw new Error('writer closed')
        const sent: Array<{ topic: string; messages: readonly OutgoingMessage[] }> = []
        const result = await work({ send: async (topic, messages) => void sent.push({ topic, messages }) })
        if (broker.down) throw new Error('initProducerId failed 11 times. (test)')
        broker.committed.push(...sent)
        return result
      },
      close: async () => {
        broker.closed = true
      },
    }),
  }
})

const DAY = 86_400_000
const NOW = Date.now()
/** A codec that keeps the consent as JSON, enough to read back what was written. */
const jsonCodec = {
  encode: async (v: unknown) => Buffer.from(JSON.stringify(v)),
  decode: async (b: Buffer) => JSON.parse(b.toString()) as unknown,
  register: async () => {},
} as unknown as TopicCodec<never>
const codecs = { consent: jsonCodec, bankTransaction: jsonCodec, raw: jsonCodec } as unknown as BankSyncCodecs

/** A bank no test here may call: the kept tokens' write needs Kafka only. */
const untouchableBank = new Proxy(
  {},
  {
    get: () => {
      throw new Error('the bank was called')
    },
  },
) as BankClient

function ownerWithKeptTokens() {
  broker.down = false
  broker.committed = []
  broker.attempts = 0
  broker.closed = false
  const cipher = new TokenCipher(createKeyring([{ id: 't', key: randomBytes(32) }]))
  const base = exampleConsent()
  const consent: Consent = {
    ...base,
    status: 'ACTIVE',
    accessToken: cipher.encrypt('access-1', consentBinding(base)),
    refreshToken: cipher.encrypt('refresh-1', consentBinding(base)),
    accessTokenExpiresAt: NOW + 3_000_000,
    expiresAt: NOW + 60 * DAY,
    refreshTokenExpiresAt: NOW + 60 * DAY,
    // Synced a moment ago: its next sync is an hour away.
    accounts: base.accounts.map((a) => ({ ...a, lastSyncedAt: NOW })),
  }
  if (consent.accounts.length === 0) throw new Error('exampleConsent() needs an account for this test')
  // What a refresh left behind when the consents topic refused its write.
  const unsavedTokens = new Map<string, UnsavedTokens>([
    [
      consent.consentId,
      {
        basedOn: consent.refreshToken,
        fields: {
          accessToken: cipher.encrypt('access-2', consentBinding(consent)),
          refreshToken: cipher.encrypt('refresh-2', consentBinding(consent)),
          accessTokenExpiresAt: NOW + 3_600_000,
          refreshTokenExpiresAt: NOW + 60 * DAY,
          tokenIssuedAt: NOW,
        },
      },
    ],
  ])
  const syncs: SyncOutcome[] = []
  const owner = new PartitionOwner({
    partition: 0,
    kafka: {} as Kafka,
    topics: { consents: 'consents', bankTransactions: 'bank', raw: 'raw' },
    codecs,
    transactionalIdPrefix: 'test',
    schedule: { intervalMs: 3_600_000, jitterMs: 0, concurrency: 4, maxBackoffMs: 300_000 },
    sync: {
      bank: untouchableBank,
      cipher,
      now: () => Date.now(),
      settings: DEFAULT_SYNC_SETTINGS,
      metrics: createBankSyncMetrics(createMetricsRegistry({ service: 'test', defaultMetrics: false })),
      logger: SILENT_LOGGER,
      unsavedTokens,
    },
    hooks: { onSynced: (_id, outcome) => syncs.push(outcome) },
  })
  const written = () =>
    broker.committed
      .filter((c) => c.topic === 'consents')
      .flatMap((c) => c.messages.map((m) => JSON.parse(String(m.value)) as Consent))
      .map((c) => cipher.decrypt(c.refreshToken as string, consentBinding(c)))
  return { owner, consent, unsavedTokens, syncs, written }
}

async function rebuilt(owner: PartitionOwner, consent: Consent): Promise<void> {
  await owner.start(async () => 1n)
  owner.apply(consent)
  owner.progress(0n)
  await owner.whenCaughtUp()
}

const until = async (what: string, done: () => boolean, timeoutMs = 5_000): Promise<void> => {
  const end = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('PartitionOwner: rotated tokens kept in memory (their write failed)', () => {
  let stop: (() => Promise<void>) | undefined
  afterEach(async () => {
    await stop?.()
    stop = undefined
  })

  it('writes them as soon as Kafka takes writes again, on a short retry of its own, not at the next sync', async () => {
    const { owner, consent, unsavedTokens, syncs, written } = ownerWithKeptTokens()
    stop = () => owner.stop()
    broker.down = true
    await rebuilt(owner, consent)
    // A new owner (after a rebalance) tries at once; Kafka is still down.
    await until('a first try of the kept tokens', () => broker.attempts >= 1)
    expect(written()).toEqual([])
    expect(unsavedTokens.size).toBe(1)

    broker.down = false
    const back = Date.now()
    await until('the kept tokens written', () => written().length > 0, 4 * TOKEN_WRITE_RETRY_MS)
    expect(Date.now() - back).toBeLessThan(3 * TOKEN_WRITE_RETRY_MS)
    expect(written()).toEqual(['refresh-2'])
    expect(unsavedTokens.size).toBe(0)
    expect(owner.consents()[0]?.status).toBe('ACTIVE')
    // Only the write: no sync ran (the bank was never called), the schedule stays an hour away.
    expect(syncs).toEqual([])
  })

  it('writes them before it gives the partition up (rebalance, shutdown), so the next owner reads working tokens', async () => {
    const { owner, consent, unsavedTokens, written } = ownerWithKeptTokens()
    broker.down = true
    await rebuilt(owner, consent)
    await until('a first try of the kept tokens', () => broker.attempts >= 1)
    await new Promise((r) => setTimeout(r, 20))
    // Kafka is back, the next retry is up to a second away, and the partition is taken away now.
    broker.down = false
    await owner.stop()
    expect(written()).toEqual(['refresh-2'])
    expect(unsavedTokens.size).toBe(0)
    expect(broker.closed).toBe(true)
  })

  it('keeps them in memory when Kafka is still down at stop, and never writes tokens of an ended consent', async () => {
    const down = ownerWithKeptTokens()
    broker.down = true
    await rebuilt(down.owner, down.consent)
    await down.owner.stop(200)
    expect(down.written()).toEqual([])
    expect(down.unsavedTokens.size).toBe(1)

    const ended = ownerWithKeptTokens()
    stop = () => ended.owner.stop()
    await rebuilt(ended.owner, { ...ended.consent, status: 'ENDED' })
    await new Promise((r) => setTimeout(r, 100))
    expect(ended.written()).toEqual([])
    expect(ended.unsavedTokens.size).toBe(0)
  })
})
