/**
 * Retention removes records of a `--from/--to` range while the backfill is still reading it
 * (DeleteRecords ahead of its consumer, what retention does to old segments). The consumer then
 * asks for an offset the log no longer holds, and the client would move it to the log start
 * without a word: the backfill would report a range it did not read whole as complete.
 *
 * Without `--accept-retention-gap` the run must end refused (exit 3, BACKFILL_RETENTION_GAP,
 * naming the partition, the offset it was to read and where the log now starts) and commit
 * nothing past the gap, so that a resume is refused the same way. With the flag it reads on from
 * the log start, completes, and its report lists the gap.
 */
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { createIngestTopics, rawFromSample, serdeForTests, startSim, type TestTopics } from '../ingest/ingest-harness.ts'
import { children, goodSamples, produceTimed, readEnriched, runCli, type TimedRaw } from './backfill-harness.ts'

const kit = createKafkaTestKit()
const serde = serdeForTests()
let sim: EnrichmentSim

beforeAll(async () => {
  sim = await startSim(61)
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await sim?.close()
  await kit.disconnectAll()
})

const DAY = 86_400_000
/** Records in the range: far more than the consumer holds ahead of what it committed. */
const RECORDS = 40_000
/**
 * How far past the committed position the log is trimmed: more than the consumer can have
 * fetched ahead of it (one fetch answer, 1 MiB of about 200-byte records, plus the loop's
 * high-water mark of 2,000 records), so that the trim lands on records it has not fetched yet.
 */
const TRIM_AHEAD = 12_000

async function rangeOnNewTopic(name: string, seed: number) {
  const topics: TestTopics & { state: string } = { ...(await createIngestTopics(kit, name, 1)), state: uniqueName('bf-state') }
  const from = Math.floor((Date.now() - 2 * DAY) / 1000) * 1000
  const samples = await goodSamples(sim, 6, seed)
  const events: TimedRaw[] = Array.from({ length: RECORDS }, (_, i) => ({ raw: rawFromSample(samples[i % samples.length]!, `${name}-${i}`), time: from + i }))
  // One send per 4,000 records: a produce request stays under the broker's message size.
  for (let i = 0; i < events.length; i += 4_000) await produceTimed(kit, serde, topics.input, events.slice(i, i + 4_000))
  const range = ['--topic', topics.input, '--from', new Date(from).toISOString(), '--to', new Date(from + DAY).toISOString()]
  return { topics, events, range }
}

/** At the run's first progress, trims the log TRIM_AHEAD records past what its group committed; returns where. */
async function trimAheadOfFirstProgress(run: ReturnType<typeof runCli>, input: string): Promise<{ backfillId: string; trimTo: bigint; committedAt: () => Promise<bigint> }> {
  await run.progress((p) => p.done > 0)
  const backfillId = run.events.find((e) => e.event === 'progress')!.backfillId as string
  const admin = kit.admin()
  const committedAt = async (): Promise<bigint> => {
    const [group] = await admin.fetchOffsets({ groupId: `backfill-${backfillId}`, topics: [input] })
    return BigInt(group!.partitions[0]!.offset)
  }
  const trimTo = (await committedAt()) + BigInt(TRIM_AHEAD)
  expect(trimTo, 'the backfill was too far into the range at its first progress to trim ahead of it').toBeLessThan(BigInt(RECORDS - 2_000))
  await admin.deleteRecords(input, [{ partition: 0, offset: trimTo }])
  return { backfillId, trimTo, committedAt }
}

describe('a --from/--to backfill overtaken by retention while it runs', () => {
  it('ends refused, naming the gap, with nothing committed past it; the resume is refused too', async () => {
    const { topics, range } = await rangeOnNewTopic('bf-overtaken', 29)
    const run = runCli(sim, topics, range)
    const { trimTo, committedAt } = await trimAheadOfFirstProgress(run, topics.input)

    expect(await run.exited, run.stderr.join('')).toEqual({ code: 3, signal: null })
    expect(run.report()).toBeUndefined()
    const refusal = run.events.find((e) => e.event === 'refused') as { code: string; retentionGaps: Array<{ partition: number; logStart: string; nextOffset: string; skippedOffsets: number }> }
    expect(refusal.code).toBe('BACKFILL_RETENTION_GAP')
    expect(refusal.retentionGaps).toHaveLength(1)
    const [gap] = refusal.retentionGaps
    const next = BigInt(gap!.nextOffset)
    expect(gap).toEqual({ partition: 0, logStart: String(trimTo), nextOffset: String(next), skippedOffsets: Number(trimTo - next) })
    expect(next).toBeLessThan(trimTo)
    expect(run.stderr.join('')).toContain(`partition 0's ${gap!.skippedOffsets} offset(s) from ${next} (the backfill was to read on from ${next}; the log now starts at ${trimTo})`)
    // Held at the gap: the group committed nothing past the offset it was to read.
    expect(await committedAt()).toBeLessThanOrEqual(next)

    const resumed = runCli(sim, topics, range)
    expect(await resumed.exited, resumed.stderr.join('')).toEqual({ code: 3, signal: null })
    expect(resumed.events.find((e) => e.event === 'refused')).toMatchObject({ code: 'BACKFILL_RETENTION_GAP', retentionGaps: [{ partition: 0, logStart: String(trimTo) }] })
  })

  it('with --accept-retention-gap reads on from the log start and reports the gap, every record left enriched once', async () => {
    const { topics, events, range } = await rangeOnNewTopic('bf-overtaken-ok', 31)
    // A larger budget than the default's 200 rows/s or so: the rows after the gap are read in seconds.
    const run = runCli(sim, topics, [...range, '--accept-retention-gap', '--api-rps', '400', '--api-concurrency', '16'])
    const { backfillId, trimTo } = await trimAheadOfFirstProgress(run, topics.input)

    expect(await run.exited, run.stderr.join('')).toEqual({ code: 0, signal: null })
    const report = run.report()!
    expect(report.retentionGaps).toHaveLength(1)
    const [gap] = report.retentionGaps
    const next = Number(gap!.nextOffset)
    expect(gap).toEqual({ partition: 0, logStart: String(trimTo), nextOffset: String(next), skippedOffsets: Number(trimTo) - next })
    const kept = [...events.slice(0, next), ...events.slice(Number(trimTo))]
    expect(report).toMatchObject({ backfillId, complete: true, rows: kept.length, lost: 0, duplicated: 0 })

    // What was read before the gap and everything after it, once each; nothing of the removed records.
    const enriched = await readEnriched(kit.kafka, serde, topics.enriched)
    expect(enriched.size).toBe(kept.length)
    expect([...enriched.keys()].sort()).toEqual(kept.map((e) => e.raw.transactionId).sort())
    for (const results of enriched.values()) expect(results).toHaveLength(1)
  })
})
