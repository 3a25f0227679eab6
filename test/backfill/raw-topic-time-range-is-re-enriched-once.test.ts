/**
 * `npm run backfill -- --from --to` re-enriches exactly the raw records of the
 * time range (offsets found by timestamp): records before and after it are left
 * alone, a record in the range that breaks the RawTransaction rules becomes a
 * rejects line naming its partition:offset, and every other record of the range
 * gets exactly one enriched result marked with its partition:offset.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import {
  createIngestTopics,
  encodeUnchecked,
  rawFromSample,
  serdeForTests,
  startSim,
  type TestTopics,
} from '../ingest/ingest-harness.ts'
import { children, goodSamples, readEnriched, runCli, tempDir } from './backfill-harness.ts'

const kit = createKafkaTestKit()
const serde = serdeForTests()
let sim: EnrichmentSim
let topics: TestTopics & { state: string }

beforeAll(async () => {
  sim = await startSim(51)
  topics = { ...(await createIngestTopics(kit, 'bf-range')), state: uniqueName('bf-state') }
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await sim?.close()
  await kit.disconnectAll()
})

describe('a time range of the raw topic', () => {
  it('is re-enriched once, and only that range', async () => {
    const samples = await goodSamples(sim, 20, 9)
    const DAY = 86_400_000
    // Days ago, not a fixed date: the broker's retention (7 days) would remove older records at
    // its next check, and such a range is refused (range-older-than-retention-is-refused...).
    const from = Math.floor((Date.now() - 3 * DAY) / 1000) * 1000
    const to = from + DAY
    const codec = serde.topic(topics.input, 'RawTransaction')
    const before = samples.map((s, i) => ({ raw: rawFromSample(s, `before-${i}`), time: from - DAY + i }))
    const inside = samples.map((s, i) => ({ raw: rawFromSample(s, `inside-${i}`), time: from + 1_000 * i }))
    const after = samples.map((s, i) => ({ raw: rawFromSample(s, `after-${i}`), time: to + i }))
    const card = inside.find((e) => e.raw.card !== null)!.raw
    const broken = await encodeUnchecked(serde, topics.input, {
      ...card,
      transactionId: 'inside-both',
      transfer: inside.find((e) => e.raw.transfer !== null)!.raw.transfer,
    })
    const producer = kit.producer()
    await producer.connect()
    // Timestamps grow with the offsets, as the broker's lookup by time expects; the broken record sits inside the range.
    const message = async (e: { raw: (typeof inside)[number]['raw']; time: number }) => ({
      key: e.raw.transactionId,
      value: await codec.encode(e.raw),
      timestamp: String(e.time),
    })
    await producer.send({ topic: topics.input, messages: await Promise.all(before.map(message)) })
    await producer.send({
      topic: topics.input,
      messages: [
        ...(await Promise.all(inside.map(message))),
        { key: 'inside-both', value: broken, timestamp: String(from + 1_000 * inside.length) },
      ],
    })
    await producer.send({ topic: topics.input, messages: await Promise.all(after.map(message)) })
    await producer.disconnect()

    const rejects = join(tempDir(), 'range.rejects.jsonl')
    const run = runCli(sim, topics, [
      '--topic',
      topics.input,
      '--from',
      new Date(from).toISOString(),
      '--to',
      new Date(to).toISOString(),
      '--rejects',
      rejects,
    ])
    expect(await run.exited, run.stderr.join('')).toEqual({ code: 0, signal: null })
    const report = run.report()!
    expect(report.rows).toBe(inside.length + 1)
    expect(report.rejected).toBe(1)
    expect(report.duplicated).toBe(0)

    const enriched = await readEnriched(kit.kafka, serde, topics.enriched)
    expect([...enriched.keys()].filter((id) => !id.startsWith('inside-'))).toEqual([])
    for (const e of inside) {
      const results = enriched.get(e.raw.transactionId) ?? []
      expect(results, e.raw.transactionId).toHaveLength(1)
      expect(results[0]!.backfill?.row).toMatch(/^[0-9]+:[0-9]+$/)
      expect(results[0]!.backfill?.backfillId).toBe(report.backfillId)
    }
    const lines = readFileSync(rejects, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { record: string; code: string; transactionId: string })
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ code: 'RAW_CARD_AND_TRANSFER', transactionId: 'inside-both' })
    expect(lines[0]!.record).toMatch(/^[0-9]+:[0-9]+$/)
  })
})
