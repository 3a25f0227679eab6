/**
 * A CSV file with good rows (cards and transfers, found and not found by the
 * simulator) and bad rows of five kinds goes through `npm run backfill`: every
 * good row ends as exactly one enriched record marked with the backfill and its
 * line, every bad row as exactly one line of the rejects file with its specific
 * reason, and the counts of the final report add up to the rows of the file. The
 * same file again is refused without --again and enriched once more with it.
 */
import { readFileSync } from 'node:fs'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { createIngestTopics, serdeForTests, startSim, type TestTopics } from '../ingest/ingest-harness.ts'
import { children, goodSamples, readEnriched, rowProblems, runCli, tempDir, writeCsv } from './backfill-harness.ts'

const kit = createKafkaTestKit()
const serde = serdeForTests()
let sim: EnrichmentSim
let topics: TestTopics & { state: string }

beforeAll(async () => {
  sim = await startSim(21)
  topics = { ...(await createIngestTopics(kit, 'bf-rows')), state: uniqueName('bf-state') }
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await sim?.close()
  await kit.disconnectAll()
})

describe('a file with good and bad rows', () => {
  it('ends as enriched records plus rejects, one outcome per row, counts equal', async () => {
    const samples = await goodSamples(sim, 40, 3)
    const plan = writeCsv(tempDir(), 'mixed', samples, 300, 20)
    const bad = plan.rows.filter((r) => 'rejected' in r.expect).length
    expect(bad).toBe(15)

    const run = runCli(sim, topics, ['--api-rps', '200', '--api-concurrency', '16', plan.path])
    const exit = await run.exited
    expect(exit, run.stderr.join('')).toEqual({ code: 0, signal: null })
    const report = run.report()!
    expect(report.complete).toBe(true)
    expect(report.rows).toBe(plan.rows.length)
    expect(report.rejected).toBe(bad)
    expect(report.enriched.matched + report.enriched.notFound + report.enriched.rejectedByApi + report.rejected).toBe(
      plan.rows.length,
    )
    expect(report.rejectsByCode).toEqual({
      RAW_INVALID_FIELD: 3,
      ROW_MISSING_FIELD: 3,
      RAW_CARD_AND_TRANSFER: 3,
      ROW_UNPARSABLE: 3,
      ROW_INVALID_VALUE: 3,
    })
    expect(report.lost).toBe(0)
    expect(report.duplicated).toBe(0)

    const rejects = readFileSync(report.rejectsFile!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; code: string; reason: string })
    expect(rejects).toHaveLength(bad)
    for (const r of rejects) expect(r.reason.length).toBeGreaterThan(10)

    const enriched = await readEnriched(kit.kafka, serde, topics.enriched)
    const problems = await rowProblems(kit.kafka, plan, enriched, rejects, report.backfillId)
    expect(problems).toEqual({ lost: [], duplicated: [], wrong: [] })

    // The same file again: refused (exit 3), nothing written.
    const again = runCli(sim, topics, [plan.path])
    expect(await again.exited).toEqual({ code: 3, signal: null })
    expect(again.stderr.join('')).toContain('--again')

    // With --again: a second, separately marked enrichment of every good row.
    const second = runCli(sim, topics, ['--again', '--api-rps', '200', plan.path])
    expect(await second.exited, second.stderr.join('')).toEqual({ code: 0, signal: null })
    const secondReport = second.report()!
    expect(secondReport.backfillId).toBe(`${report.backfillId}.2`)
    expect(secondReport.rows).toBe(plan.rows.length)
    const after = await readEnriched(kit.kafka, serde, topics.enriched)
    const secondProblems = await rowProblems(kit.kafka, plan, after, rejects, secondReport.backfillId)
    expect(secondProblems).toEqual({ lost: [], duplicated: [], wrong: [] })
  })
})
