import { describe, expect, it } from 'vitest'
import { addRatios, verdictRows, type ScenarioResults } from './verdicts.ts'

const naive = { eventsPerSecond: 200, cpuUsPerEvent: 1_000 }

/** The figures of one run with every row met; each test spoils one figure. */
function run(overrides: ScenarioResults = {}): ScenarioResults {
  const results: ScenarioResults = {
    passthrough: { eventsPerSecond: 100_000, cpuUsPerEvent: 7 },
    'kstreams-eos-passthrough': { eventsPerSecond: 60_000, cpuUsPerEvent: 13 },
    'eos-passthrough': { eventsPerSecond: 95_000, cpuUsPerEvent: 6 },
    'ingest-batch': { eventsPerSecond: 50_000, cpuUsPerEvent: 26 },
    'ingest-single': { eventsPerSecond: 30_000, cpuUsPerEvent: 100 },
    backfill: { rows: 200_000, rowsPerSecond: 7_000, lost: 0, duplicated: 0, liveP99Ms: 64, liveP99MsWithoutBackfill: 32, liveP99Ratio: 2 },
    ...overrides,
  }
  addRatios(results, naive)
  return results
}

const verdict = (results: ScenarioResults, figure: RegExp) => verdictRows(results, naive).find((r) => figure.test(r.figure))?.met

describe('the verdicts of a bench run', () => {
  it('meets every row of a run whose figures are all within their targets', () => {
    const rows = verdictRows(run(), naive)
    expect(rows.filter((r) => r.met === false)).toEqual([])
    expect(rows.find((r) => r.figure.startsWith('live p99 with'))?.text).toBe(
      'p99 64 ms with, 32 ms without (2×); 200,000 rows at 7,000/s, 0 lost, 0 duplicated',
    )
  })

  it('holds the exactly-once loop to 1.5× the Kafka Streams row as well as 0.9× plain', () => {
    expect(verdict(run({ 'kstreams-eos-passthrough': { eventsPerSecond: 70_000 } }), /exactly-once pass-through/)).toBe(false)
  })

  it('holds the batch ingest to 30 µs of CPU per event', () => {
    expect(verdict(run({ 'ingest-batch': { eventsPerSecond: 50_000, cpuUsPerEvent: 30.5 } }), /batch findBy/)).toBe(false)
    expect(verdict(run({ 'ingest-batch': { eventsPerSecond: 50_000, cpuUsPerEvent: 30 } }), /batch findBy/)).toBe(true)
  })

  it("judges the ingest's throughput against the KafkaJS pass-through, as ARCHITECTURE.md §8 states it, when the run has that row", () => {
    const results = run({
      passthrough: { eventsPerSecond: 200_000, cpuUsPerEvent: 6 },
      'kafkajs-passthrough': { eventsPerSecond: 70_000, cpuUsPerEvent: 15 },
      'ingest-batch': { eventsPerSecond: 37_500, cpuUsPerEvent: 23.5 },
      'ingest-single': { eventsPerSecond: 8_000, cpuUsPerEvent: 106 },
    })
    expect(verdict(results, /batch findBy/)).toBe(true)
    expect(verdict(results, /one findBy per event/)).toBe(false)
    expect(verdictRows(results, naive).find((r) => /batch findBy/.test(r.figure))?.text).toContain('0.19× plain, 0.63× Kafka Streams EOS, 0.54× KafkaJS, 188× naive')
    // Without the KafkaJS row the plain pass-through is the yardstick: 0.19× is not half.
    delete results['kafkajs-passthrough']
    delete results['ingest-batch']!.ratioToKafkajs
    expect(verdict(results, /batch findBy/)).toBe(false)
  })

  it('fails the backfill row on a live p99 over 2× the one without it, over 100 ms, or on any record lost or doubled', () => {
    const backfill = { rows: 200_000, rowsPerSecond: 7_000, lost: 0, duplicated: 0, liveP99Ms: 64, liveP99MsWithoutBackfill: 32, liveP99Ratio: 2 }
    const row = /live p99 with/
    expect(verdict(run({ backfill: { ...backfill, liveP99Ms: 65, liveP99Ratio: 2.03 } }), row)).toBe(false)
    expect(verdict(run({ backfill: { ...backfill, liveP99Ms: 101, liveP99MsWithoutBackfill: 60, liveP99Ratio: 1.68 } }), row)).toBe(false)
    expect(verdict(run({ backfill: { ...backfill, lost: 1 } }), row)).toBe(false)
    expect(verdict(run({ backfill: { ...backfill, duplicated: 1 } }), row)).toBe(false)
  })

  it('reports a scenario that failed as not met, with its error', () => {
    const rows = verdictRows(run({ backfill: { failed: 'the backfill exited 3' } }), naive)
    expect(rows.find((r) => r.figure.startsWith('live p99 with'))).toMatchObject({ met: false, text: 'failed: the backfill exited 3' })
  })
})
