import { createMetricsRegistry } from '@tep/observability'
import { describe, expect, it } from 'vitest'
import { createIngestMetrics, timed } from './metrics.ts'

describe('createIngestMetrics', () => {
  it('exports the table-miss series at 0 before any miss, so a warm table still shows a rate of 0 rather than no data', async () => {
    const registry = createMetricsRegistry({ service: 'ingest', defaultMetrics: false })
    createIngestMetrics(registry)
    const lines = (await registry.metrics())
      .split('\n')
      .filter((l) => l.startsWith('ingest_table_misses_total{'))
    expect(lines.sort()).toEqual([
      'ingest_table_misses_total{table="merchants",reason="absent",service="ingest"} 0',
      'ingest_table_misses_total{table="merchants",reason="stale",service="ingest"} 0',
      'ingest_table_misses_total{table="shops",reason="absent",service="ingest"} 0',
      'ingest_table_misses_total{table="shops",reason="stale",service="ingest"} 0',
    ])
  })

  it('exports the table-hit series at 0 before any hit, so a cold table shows a hit rate of 0 rather than no data', async () => {
    const registry = createMetricsRegistry({ service: 'ingest', defaultMetrics: false })
    createIngestMetrics(registry)
    const lines = (await registry.metrics())
      .split('\n')
      .filter((l) => l.startsWith('ingest_table_hits_total{'))
    expect(lines.sort()).toEqual([
      'ingest_table_hits_total{table="merchants",service="ingest"} 0',
      'ingest_table_hits_total{table="shops",service="ingest"} 0',
    ])
  })
})

describe('timed', () => {
  const counts = async (registry: ReturnType<typeof createMetricsRegistry>): Promise<string[]> =>
    (await registry.metrics())
      .split('\n')
      .filter((l) => l.startsWith('ingest_api_request_duration_seconds_count{'))
      .sort()

  it('counts each call under its operation and result: ok, the error label of a rejection, and of a synchronous throw', async () => {
    const registry = createMetricsRegistry({ service: 'ingest', defaultMetrics: false })
    const metrics = createIngestMetrics(registry)
    const label = (err: unknown): string => (err as Error).message
    await expect(timed(metrics, 'opA', () => Promise.resolve(7), label)).resolves.toBe(7)
    await expect(timed(metrics, 'opA', () => Promise.resolve(8), label)).resolves.toBe(8)
    await expect(timed(metrics, 'opA', () => Promise.reject(new Error('E1')), label)).rejects.toThrow('E1')
    await expect(
      timed(
        metrics,
        'opB',
        () => {
          throw new Error('E2')
        },
        label,
      ),
    ).rejects.toThrow('E2')
    expect(await counts(registry)).toEqual([
      'ingest_api_request_duration_seconds_count{service="ingest",operation="opA",result="E1"} 1',
      'ingest_api_request_duration_seconds_count{service="ingest",operation="opA",result="ok"} 2',
      'ingest_api_request_duration_seconds_count{service="ingest",operation="opB",result="E2"} 1',
    ])
  })

  it('keeps the series of two registries apart', async () => {
    const first = createMetricsRegistry({ service: 'ingest', defaultMetrics: false })
    const second = createMetricsRegistry({ service: 'ingest', defaultMetrics: false })
    await timed(createIngestMetrics(first), 'op', () => Promise.resolve(1), String)
    expect(await counts(first)).toHaveLength(1)
    expect(await counts(second)).toHaveLength(0)
  })
})
