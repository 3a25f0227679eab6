/**
 * A `--from/--to` backfill is killed with SIGKILL part-way, and before it is run again
 * retention removes records of its range that it had not read yet (DeleteRecords past the
 * group's committed position, what retention does to old segments). The resumed run must not
 * read on from the new log start and report itself complete: it is refused (exit 3,
 * BACKFILL_RETENTION_GAP, naming the partition, where it was to read next and where the log
 * now starts). With `--accept-retention-gap` it completes with what is left, every record
 * enriched once, and the report lists the gap with the number of offsets skipped.
 */
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { createIngestTopics, rawFromSample, serdeForTests, startSim, type TestTopics } from '../ingest/ingest-harness.ts'
import { children, goodSamples, killAtFirstProgress, produceTimed, readEnriched, runCli } from './backfill-harness.ts'

const kit = createKafkaTestKit()
const serde = serdeForTests()
let sim: EnrichmentSim
let topics: TestTopics & { state: string }

beforeAll(async () => {
  sim = await startSim(57)
  topics = { ...(await createIngestTopics(kit, 'bf-resume-gap', 1)), state: uniqueName('bf-state') }
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await sim?.close()
  await kit.disconnectAll()
})

/** Records in the range; the first run is killed far before its end. */
const RECORDS = 3_000
/**
 * How far past the committed position the log is trimmed: more than one transaction of the
 * pipeline (500 records), which the killed run may have been committing as it died and whose
 * offsets may show only after the test read the committed position.
 */
const TRIM_MARGIN = 600

describe('a killed --from/--to backfill whose unread records retention removed before the resume', () => {
  it('is refused on resume, and with --accept-retention-gap completes with the gap reported', async () => {
    const DAY = 86_400_000
    const from = Math.floor((Date.now() - 2 * DAY) / 1000) * 1000
    const samples = await goodSamples(sim, 6, 23)
    const events = Array.from({ length: RECORDS }, (_, i) => ({
      raw: rawFromSample(samples[i % samples.length]!, `resume-gap-${i}`),
      time: from + 10 * i,
    }))
    await produceTimed(kit, serde, topics.input, events)

    const range = ['--topic', topics.input, '--from', new Date(from).toISOString(), '--to', new Date(from + DAY).toISOString()]
    // A small budget so that the first run is still early in the range when it is killed.
    const args = [...range, '--api-rps', '20', '--api-concurrency', '2']
    const first = runCli(sim, topics, args)
    const backfillId = await killAtFirstProgress(first)

    const admin = kit.admin()
    const committedAt = async (): Promise<bigint> => {
      const [group] = await admin.fetchOffsets({ groupId: `backfill-${backfillId}`, topics: [topics.input] })
      return BigInt(group!.partitions[0]!.offset)
    }
    const killedAt = await committedAt()
    expect(killedAt).toBeGreaterThan(0n)
    const trimTo = killedAt + BigInt(TRIM_MARGIN)
    expect(trimTo, `the first run read ${killedAt} of ${RECORDS} records before it was killed: too far to trim unread ones`).toBeLessThan(
      BigInt(RECORDS - 500),
    )
    await admin.deleteRecords(topics.input, [{ partition: 0, offset: trimTo }])
    expect((await admin.fetchTopicOffsets(topics.input))[0]).toMatchObject({ low: String(trimTo), high: String(RECORDS) })

    const refused = runCli(sim, topics, args)
    expect(await refused.exited, refused.stderr.join('')).toEqual({ code: 3, signal: null })
    expect(refused.report()).toBeUndefined()
    // Where the resume was to read: what the killed run committed, by now also a commit it was finishing.
    const next = await committedAt()
    expect(next).toBeLessThan(trimTo)
    const gap = { partition: 0, logStart: String(trimTo), nextOffset: String(next), skippedOffsets: Number(trimTo - next) }
    expect(refused.events.find((e) => e.event === 'refused')).toMatchObject({ code: 'BACKFILL_RETENTION_GAP', retentionGaps: [gap] })
    expect(refused.stderr.join('')).toContain(
      `refused: ${topics.input}: retention removed records of the range before this backfill read them: ` +
        `partition 0's ${gap.skippedOffsets} offset(s) from ${next} (the backfill was to read on from ${next}; the log now starts at ${trimTo})`,
    )

    // A dry run of the same command answers as the resume does: refused with the same gap, and with the flag it
    // reports the gap and that it would resume this backfill.
    const dryRefused = runCli(sim, topics, [...args, '--dry-run'])
    expect(await dryRefused.exited, dryRefused.stderr.join('')).toEqual({ code: 3, signal: null })
    expect(dryRefused.events.find((e) => e.event === 'refused')).toMatchObject({ code: 'BACKFILL_RETENTION_GAP', retentionGaps: [gap] })
    const dry = runCli(sim, topics, [...args, '--dry-run', '--accept-retention-gap'])
    expect(await dry.exited, dry.stderr.join('')).toEqual({ code: 0, signal: null })
    expect(dry.report()).toMatchObject({ dryRun: true, backfillId, resumed: true, retentionGaps: [gap] })

    const accepted = runCli(sim, topics, [...range, '--api-rps', '400', '--api-concurrency', '16', '--accept-retention-gap'])
    expect(await accepted.exited, accepted.stderr.join('')).toEqual({ code: 0, signal: null })
    const report = accepted.report()!
    const kept = [...events.slice(0, Number(next)), ...events.slice(Number(trimTo))]
    expect(report).toMatchObject({ backfillId, complete: true, resumed: true, rows: kept.length, lost: 0, duplicated: 0, retentionGaps: [gap] })

    // Every record read before the kill or left after the trim enriched exactly once; none of the removed ones.
    const enriched = await readEnriched(kit.kafka, serde, topics.enriched)
    expect([...enriched.keys()].sort()).toEqual(kept.map((e) => e.raw.transactionId).sort())
    for (const results of enriched.values()) expect(results).toHaveLength(1)
  })

  it('is no gap when retention removed only records the killed run had read: its dry run and its resume go on', async () => {
    const DAY = 86_400_000
    const own = { ...(await createIngestTopics(kit, 'bf-resume-read', 1)), state: uniqueName('bf-state') }
    const from = Math.floor((Date.now() - 2 * DAY) / 1000) * 1000
    const samples = await goodSamples(sim, 6, 29)
    const events = Array.from({ length: RECORDS }, (_, i) => ({ raw: rawFromSample(samples[i % samples.length]!, `resume-read-${i}`), time: from + 10 * i }))
    await produceTimed(kit, serde, own.input, events)
    const range = ['--topic', own.input, '--from', new Date(from).toISOString(), '--to', new Date(from + DAY).toISOString()]
    const args = [...range, '--api-rps', '20', '--api-concurrency', '2']
    const backfillId = await killAtFirstProgress(runCli(sim, own, args))

    const admin = kit.admin()
    const [group] = await admin.fetchOffsets({ groupId: `backfill-${backfillId}`, topics: [own.input] })
    const committed = BigInt(group!.partitions[0]!.offset)
    expect(committed).toBeGreaterThan(0n)
    // Retention removes what the killed run had already read, and no more.
    await admin.deleteRecords(own.input, [{ partition: 0, offset: committed }])

    // A new range starting at that log start would be refused; the resume's dry run is not.
    const dry = runCli(sim, own, [...args, '--dry-run'])
    expect(await dry.exited, dry.stderr.join('')).toEqual({ code: 0, signal: null })
    expect(dry.report()).toMatchObject({ dryRun: true, backfillId, resumed: true, retentionGaps: [] })
    const resumed = runCli(sim, own, [...range, '--api-rps', '400', '--api-concurrency', '16'])
    expect(await resumed.exited, resumed.stderr.join('')).toEqual({ code: 0, signal: null })
    expect(resumed.report()).toMatchObject({ backfillId, complete: true, resumed: true, rows: RECORDS, lost: 0, duplicated: 0, retentionGaps: [] })
  })
})
