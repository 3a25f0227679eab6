/**
 * A `--from/--to` backfill is killed with SIGKILL part-way, and before it is run again its
 * group's committed offsets are gone: Kafka deletes them once a group has been empty for
 * offsets.retention.minutes (7 days by default), which a backfill paused over a long weekend
 * can reach. The test deletes the group, which is what that expiry does. Without offsets the
 * consumer would start at the log's start: records before `--from` would be enriched and what
 * the killed run had done would be done twice. The resumed run reads on after the last row its
 * ledger holds (written in the same transactions as the offsets): every record of the range
 * enriched exactly once, none from before it.
 */
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import { createIngestTopics, rawFromSample, serdeForTests, startSim, type TestTopics } from '../ingest/ingest-harness.ts'
import { children, goodSamples, killAtFirstProgress, produceTimed, readEnriched, runCli } from './backfill-harness.ts'

const kit = createKafkaTestKit()
const serde = serdeForTests()
let sim: EnrichmentSim
let topics: TestTopics & { state: string }

beforeAll(async () => {
  sim = await startSim(58)
  topics = { ...(await createIngestTopics(kit, 'bf-expired', 1)), state: uniqueName('bf-state') }
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await sim?.close()
  await kit.disconnectAll()
})

/** Records before the range (must never be enriched) and in it. */
const BEFORE = 300
const IN_RANGE = 2_000

describe('a killed --from/--to backfill whose group offsets expired before the resume', () => {
  it('reads on after the last row of its ledger: the range enriched once, nothing before it', async () => {
    const DAY = 86_400_000
    const from = Math.floor((Date.now() - 2 * DAY) / 1000) * 1000
    const samples = await goodSamples(sim, 6, 29)
    const events = Array.from({ length: BEFORE + IN_RANGE }, (_, i) => ({
      raw: rawFromSample(samples[i % samples.length]!, `expired-${i}`),
      // The first BEFORE records an hour before `from`, the rest inside the range.
      time: i < BEFORE ? from - 3_600_000 + i : from + 10 * (i - BEFORE),
    }))
    await produceTimed(kit, serde, topics.input, events)

    const range = ['--topic', topics.input, '--from', new Date(from).toISOString(), '--to', new Date(from + DAY).toISOString()]
    const first = runCli(sim, topics, [...range, '--api-rps', '20', '--api-concurrency', '2'])
    const backfillId = await killAtFirstProgress(first)
    const group = `backfill-${backfillId}`

    const admin = kit.admin()
    const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topics.input] })
    const killedAt = BigInt(committed!.partitions[0]!.offset)
    expect(killedAt, 'the killed run committed part of the range').toBeGreaterThan(BigInt(BEFORE))
    expect(killedAt, 'the killed run left part of the range unread').toBeLessThan(BigInt(BEFORE + IN_RANGE))
    // The killed member stays in the group until its session times out (6 s); only an empty group's offsets go.
    await waitFor(`group ${group} empty`, async () => (await admin.describeGroups([group])).groups[0]?.state === 'Empty', { timeoutMs: 60_000, intervalMs: 250 })
    await admin.deleteGroups([group])
    expect((await admin.fetchOffsets({ groupId: group, topics: [topics.input] }))[0]!.partitions[0]!.offset).toBe('-1')

    const resumed = runCli(sim, topics, [...range, '--api-rps', '400', '--api-concurrency', '16'])
    expect(await resumed.exited, resumed.stderr.join('')).toEqual({ code: 0, signal: null })
    expect(resumed.report()).toMatchObject({ backfillId, complete: true, resumed: true, rows: IN_RANGE, lost: 0, duplicated: 0 })

    const enriched = await readEnriched(kit.kafka, serde, topics.enriched)
    expect([...enriched.keys()].sort()).toEqual(events.slice(BEFORE).map((e) => e.raw.transactionId).sort())
    for (const results of enriched.values()) expect(results).toHaveLength(1)
  })
})
