/**
 * `npm run backfill` is killed with SIGKILL twice (once at its first progress
 * line, as soon as rows are loaded, once in the middle of enriching) and the same command is run again
 * each time. After the last run: every row of the file has exactly one outcome
 * (enriched with its line as marker, or a rejects line), 0 lost, 0 duplicated,
 * and the resumed run says it resumed.
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
  sim = await startSim(31)
  topics = { ...(await createIngestTopics(kit, 'bf-kill')), state: uniqueName('bf-state') }
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await sim?.close()
  await kit.disconnectAll()
})

describe('a backfill killed with SIGKILL', () => {
  it('resumes on the same command with 0 lost and 0 duplicated rows', async () => {
    const samples = await goodSamples(sim, 60, 5)
    const plan = writeCsv(tempDir(), 'killed', samples, 4_000, 100)
    // Small budget and small rows-topic transactions: the kills land mid-load and mid-enrichment.
    const args = ['--api-rps', '40', '--api-concurrency', '4', '--partitions', '3', plan.path]

    const first = runCli(sim, topics, args)
    await first.progress((p) => p.loaded > 0)
    first.child.kill('SIGKILL')
    expect((await first.exited).signal).toBe('SIGKILL')

    const second = runCli(sim, topics, args)
    let resumedAt = 0
    await second.progress((p) => {
      resumedAt ||= p.done
      return p.done >= resumedAt + 800
    })
    second.child.kill('SIGKILL')
    expect((await second.exited).signal).toBe('SIGKILL')

    const last = runCli(sim, topics, ['--api-rps', '400', '--api-concurrency', '16', '--partitions', '3', plan.path])
    expect(await last.exited, last.stderr.join('')).toEqual({ code: 0, signal: null })
    const report = last.report()!
    expect(report.resumed).toBe(true)
    expect(report.rowsThisRun).toBeLessThan(plan.rows.length)
    expect(report.rows).toBe(plan.rows.length)
    expect(report.lost).toBe(0)
    expect(report.duplicated).toBe(0)

    const rejects = readFileSync(report.rejectsFile!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; code: string })
    const enriched = await readEnriched(kit.kafka, serde, topics.enriched)
    const problems = await rowProblems(kit.kafka, plan, enriched, rejects, report.backfillId)
    expect(problems.lost).toEqual([])
    expect(problems.duplicated).toEqual([])
    expect(problems.wrong).toEqual([])
  })
})
