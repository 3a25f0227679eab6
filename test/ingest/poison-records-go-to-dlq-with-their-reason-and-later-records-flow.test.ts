/**
 * Nothing a single raw record contains can pause a partition: a 20 kB field (a
 * GET the API answers 431), the records of a 6 MB batch body (over the API's
 * 5 MiB body limit: 413), an `occurredAt` beyond the JavaScript date range
 * (a RangeError while building the request), a 400-digit amount and an unknown
 * currency each end on the DLQ with a code and a message naming the field,
 * while the good records produced AFTER them on the same partition are enriched.
 * Run in both lookup modes against the real simulator, broker and registry.
 */
import { readDlqHeaders } from '@tep/kafka'
import type { RawTransaction } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  fetchSamples,
  rawFromSample,
  readOutcomes,
  useIngestWorld,
} from './ingest-harness.ts'

const world = useIngestWorld(23)
const { kit, serde } = world

/** 400 entries of 15 kB: one batch call would carry a 6 MB body, over the simulator's 5 MiB. */
const BIG_BATCH_RECORDS = 400
const BIG_BATCH_FIELD = 15_000

interface Poison {
  event: RawTransaction
  /** What the DLQ message must say. */
  reason: RegExp
}

describe.each(['batch', 'single'] as const)('transaction-ingest in %s lookup mode', (mode) => {
  it('dead-letters each poison record with its reason and enriches the records after it', async () => {
    // One partition: "after" is a real order, and a paused partition would stop them all.
    const topics = await createIngestTopics(kit, `ingest-poison-${mode}`, 1)
    const [cards, transfers] = await Promise.all([
      fetchSamples(world.sim, 'card', 'found', 20, 5),
      fetchSamples(world.sim, 'transfer', 'found', 6, 5),
    ])
    const card = rawFromSample(cards[0]!, 'template-card')
    const transfer = rawFromSample(transfers[0]!, 'template-transfer')
    const big = 'W'.repeat(20_000)

    const poison: Poison[] = [
      {
        event: { ...card, transactionId: `${mode}-20kB-description`, card: { ...card.card!, description: big } },
        reason: /card\.description must be at most 99 characters, got 20000/,
      },
      {
        event: { ...transfer, transactionId: `${mode}-20kB-message`, transfer: { ...transfer.transfer!, message: big } },
        reason: /transfer\.message must be at most 140 characters, got 20000/,
      },
      {
        event: { ...card, transactionId: `${mode}-date-out-of-range`, occurredAt: 8.64e15 + 1 },
        reason: /occurredAt must be epoch milliseconds/,
      },
      {
        event: { ...card, transactionId: `${mode}-400-digits`, amount: '9'.repeat(400) },
        reason: /amount must have at most 15 integer digits, got 400/,
      },
      {
        event: { ...card, transactionId: `${mode}-currency-ZZZ`, currency: 'ZZZ' },
        reason: /currency "ZZZ" is not an ISO 4217 currency code/,
      },
    ]
    for (let i = 0; i < BIG_BATCH_RECORDS; i++) {
      poison.push({
        event: {
          ...card,
          transactionId: `${mode}-6MB-batch-${i}`,
          card: { ...card.card!, description: `${i}`.padEnd(BIG_BATCH_FIELD, 'X') },
        },
        reason: /card\.description must be at most 99 characters, got 15000/,
      })
    }

    // Good records interleaved after each kind of poison, all on the one partition.
    const goods: RawTransaction[] = [
      ...cards.map((s, i) => rawFromSample(s, `${mode}-good-card-${i}`)),
      ...transfers.map((s, i) => rawFromSample(s, `${mode}-good-transfer-${i}`)),
    ]
    const sequence: RawTransaction[] = []
    const perPoison = Math.ceil(goods.length / 5)
    for (let i = 0; i < 5; i++) {
      sequence.push(poison[i]!.event, ...goods.slice(i * perPoison, (i + 1) * perPoison))
    }
    sequence.push(...poison.slice(5).map((p) => p.event))
    const tail = cards.slice(0, 5).map((s, i) => rawFromSample(s, `${mode}-after-big-batch-${i}`))
    sequence.push(...tail)

    const codec = serde.topic(topics.input, 'RawTransaction')
    const producer = kit.producer()
    await producer.connect()
    try {
      // Small produce requests: 40 records of 15 kB stay under the broker's 1 MB batch limit.
      for (let i = 0; i < sequence.length; i += 40) {
        const chunk = sequence.slice(i, i + 40)
        await producer.send({
          topic: topics.input,
          messages: await Promise.all(
            chunk.map(async (e) => ({ key: e.transactionId, value: await codec.encode(e) })),
          ),
        })
      }
    } finally {
      await producer.disconnect()
    }

    const ingest = await world.startIngest(topics, { lookupMode: mode, batchLingerMs: 5 })

    const admin = kit.admin()
    await admin.connect()
    // A paused partition never reaches its end: this wait is the proof that nothing stalled.
    await waitFor(
      'ingest to consume every raw record past the poison',
      () => consumedToEnd(admin, topics.groupId, topics.input),
      { timeoutMs: 90_000 },
    )
    await ingest.stop()

    const outcomes = await readOutcomes(kit.kafka, serde, topics)
    expect(outcomes.duplicates).toEqual([])
    expect(outcomes.total).toBe(sequence.length)
    for (const good of [...goods, ...tail]) {
      expect(outcomes.enriched.get(good.transactionId)?.[0]?.status, good.transactionId).toBe('MATCHED')
    }
    const dlq = await readTopic(kit.kafka, topics.dlq, { timeoutMs: 60_000 })
    const byKey = new Map(dlq.map((r) => [r.key?.toString('utf8'), readDlqHeaders(r.headers)]))
    for (const p of poison) {
      const headers = byKey.get(p.event.transactionId)
      expect(headers?.errorCode, p.event.transactionId).toBe('RAW_INVALID_FIELD')
      expect(headers?.errorMessage, p.event.transactionId).toMatch(p.reason)
      // The reason names the field and its size, it does not copy the oversized value.
      expect(headers?.errorMessage?.length ?? 0).toBeLessThan(1_000)
    }
  })
})
