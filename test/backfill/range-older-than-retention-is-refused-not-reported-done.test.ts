/**
 * A `--from/--to` range that may start among records retention already removed
 * is refused (exit code 3, naming the partition and where its log now starts)
 * instead of "completing" with the rows that are left, or with none at all;
 * `--accept-retention-gap` then backfills exactly what is left, and the report
 * says where the gap is. A dry run answers the same way.
 */
import { join } from 'node:path'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { createIngestTopics, rawFromSample, serdeForTests, startSim, type TestTopics } from '../ingest/ingest-harness.ts'
import { children, goodSamples, produceTimed, readEnriched, runCli, tempDir } from './backfill-harness.ts'

const kit = createKafkaTestKit()
const serde = serdeForTests()
let sim: EnrichmentSim
let topics: TestTopics & { state: string }

beforeAll(async () => {
  sim = await startSim(52)
  topics = { ...(await createIngestTopics(kit, 'bf-retention', 1)), state: uniqueName('bf-state') }
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await sim?.close()
  await kit.disconnectAll()
})

describe('a time range whose first records retention removed', () => {
  it('is refused, and with --accept-retention-gap backfills what is left', async () => {
    const DAY = 86_400_000
    const from = Math.floor((Date.now() - 3 * DAY) / 1000) * 1000
    const samples = (await goodSamples(sim, 6, 11)).slice(0, 10)
    expect(samples).toHaveLength(10)
    const events = samples.map((s, i) => ({ raw: rawFromSample(s, `kept-or-gone-${i}`), time: from + 1_000 * i }))
    await produceTimed(kit, serde, topics.input, events)
    // What retention does to the oldest segment: the log now starts at offset 4.
    const admin = kit.admin()
    await admin.deleteRecords(topics.input, [{ partition: 0, offset: 4n }])
    expect((await admin.fetchTopicOffsets(topics.input))[0]).toMatchObject({ low: '4', high: '10' })

    const range = [
      ...['--topic', topics.input, '--from', new Date(from).toISOString(), '--to', new Date(from + DAY).toISOString()],
      // Not the default (backfill-<id>.rejects.jsonl in the working directory): the dry run writes its file even empty.
      ...['--rejects', join(tempDir(), 'range.rejects.jsonl')],
    ]
    const refused = runCli(sim, topics, range)
    expect(await refused.exited, refused.stderr.join('')).toEqual({ code: 3, signal: null })
    expect(refused.stderr.join('')).toContain(`refused: ${topics.input}: the range may start before the oldest record still in the topic`)
    expect(refused.stderr.join('')).toContain("partition 0's offsets before 4")
    expect(refused.report()).toBeUndefined()
    expect((await readEnriched(kit.kafka, serde, topics.enriched)).size).toBe(0)

    // A dry run answers as the run would: refused, then with the flag it counts what is left.
    const dryRefused = runCli(sim, topics, [...range, '--dry-run'])
    expect(await dryRefused.exited, dryRefused.stderr.join('')).toEqual({ code: 3, signal: null })
    expect(dryRefused.stderr.join('')).toContain("partition 0's offsets before 4")
    const dry = runCli(sim, topics, [...range, '--dry-run', '--accept-retention-gap'])
    expect(await dry.exited, dry.stderr.join('')).toEqual({ code: 0, signal: null })
    expect(dry.report()).toMatchObject({ dryRun: true, rows: 6, retentionGaps: [{ partition: 0, logStart: '4' }] })

    const accepted = runCli(sim, topics, [...range, '--accept-retention-gap'])
    expect(await accepted.exited, accepted.stderr.join('')).toEqual({ code: 0, signal: null })
    const report = accepted.report()!
    expect(report).toMatchObject({ complete: true, rows: 6, lost: 0, duplicated: 0, retentionGaps: [{ partition: 0, logStart: '4' }] })
    const enriched = await readEnriched(kit.kafka, serde, topics.enriched)
    expect([...enriched.keys()].sort()).toEqual(events.slice(4).map((e) => e.raw.transactionId).sort())
    for (const results of enriched.values()) expect(results).toHaveLength(1)
  })
})
