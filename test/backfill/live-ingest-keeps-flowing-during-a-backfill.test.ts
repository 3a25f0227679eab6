/**
 * While a backfill enriches a file through the same enrichment API, the live
 * ingest keeps flowing: live raw events produced after the backfill started
 * enrichment are all enriched (exactly once, without a backfill marker) while
 * the backfill is still running, and afterwards the backfill completes with
 * every row of its file enriched exactly once.
 */
import { createMetricsRegistry } from '@tep/observability'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  produceRaw,
  rawFromSample,
  useIngestWorld,
  type TestTopics,
} from '../ingest/ingest-harness.ts'
import { children, goodSamples, readEnriched, rowProblems, runCli, tempDir, writeCsv } from './backfill-harness.ts'

const world = useIngestWorld(41)
const { kit, serde } = world
let topics: TestTopics & { state: string }

beforeAll(async () => {
  topics = { ...(await createIngestTopics(kit, 'bf-live')), state: uniqueName('bf-state') }
})

afterAll(() => {
  for (const c of children) c.kill('SIGKILL')
})

describe('the live ingest during a backfill', () => {
  it('keeps enriching live events exactly once while the backfill runs, and the backfill completes', async () => {
    await world.startIngest(topics, {
      metricsRegistry: createMetricsRegistry({ service: 'ingest-live', defaultMetrics: false }),
      lagIntervalMs: 1_000,
    })

    const samples = await goodSamples(world.sim, 60, 7)
    // A budget of 20 requests per second makes the backfill last well beyond the live batch.
    const plan = writeCsv(tempDir(), 'alongside', samples, 3_000, 1_000_000)
    const backfill = runCli(world.sim, topics, ['--api-rps', '20', '--api-concurrency', '2', '--max-live-lag', '50', plan.path])
    await backfill.progress((p) => p.done > 0)

    const live = samples.slice(0, 200).map((s, i) => rawFromSample(s, `live-${i}`))
    await produceRaw(kit, serde, topics.input, live)
    const admin = kit.admin()
    await admin.connect()
    await waitFor('the live ingest to consume every live event', () => consumedToEnd(admin, topics.groupId, topics.input), {
      timeoutMs: 90_000,
    })
    // The live events were served while the backfill was still at work.
    expect(backfill.child.exitCode).toBeNull()
    expect(backfill.report()).toBeUndefined()

    expect(await backfill.exited, backfill.stderr.join('')).toEqual({ code: 0, signal: null })
    const report = backfill.report()!
    expect(report.rows).toBe(plan.rows.length)
    expect(report.lost).toBe(0)
    expect(report.duplicated).toBe(0)

    const enriched = await readEnriched(kit.kafka, serde, topics.enriched)
    for (const event of live) {
      const results = enriched.get(event.transactionId) ?? []
      expect(results, event.transactionId).toHaveLength(1)
      expect(results[0]!.backfill ?? null).toBeNull()
    }
    const problems = await rowProblems(kit.kafka, plan, enriched, [], report.backfillId)
    expect(problems).toEqual({ lost: [], duplicated: [], wrong: [] })
  })
})
