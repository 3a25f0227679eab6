import { createMetricsRegistry } from '@tep/observability'
import { describe, expect, it } from 'vitest'
import { createIngestMetrics } from './metrics.ts'

describe('createIngestMetrics', () => {
  it('exports the table-miss series at 0 before any miss, so a warm table still shows a rate of 0 rather than no data', async () => {
    const registry = createMetricsRegistry({ service: 'ingest', defaultMetrics: false })
    createIngestMetrics(registry)
    const lines = (await registry.metrics()).split('\n').filter((l) => l.startsWith('ingest_table_misses_total{'))
    expect(lines.sort()).toEqual([
      'ingest_table_misses_total{table="merchants",reason="absent",service="ingest"} 0',
      'ingest_table_misses_total{table="merchants",reason="stale",service="ingest"} 0',
      'ingest_table_misses_total{table="shops",reason="absent",service="ingest"} 0',
      'ingest_table_misses_total{table="shops",reason="stale",service="ingest"} 0',
    ])
  })
})
