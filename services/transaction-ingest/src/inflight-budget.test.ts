import { describe, expect, it } from 'vitest'
import { loadConfig } from '@tep/config'
import { INGEST_ENV } from './config.ts'
import { BATCH_MODE_CONCURRENCY, defaultConcurrency } from './inflight-budget.ts'

describe('the in-flight budget when INGEST_CONCURRENCY is unset', () => {
  it('is 500 per partition factor in batch mode, whatever the API concurrency', () => {
    expect(defaultConcurrency('batch', 64)).toBe(BATCH_MODE_CONCURRENCY)
    expect(defaultConcurrency('batch', 4)).toBe(500)
  })

  it('follows the API request slots in single mode: twice INGEST_API_MAX_CONCURRENT', () => {
    expect(defaultConcurrency('single', 64)).toBe(128)
    expect(defaultConcurrency('single', 1)).toBe(2)
  })

  it('leaves INGEST_CONCURRENCY unset by default, so that the mode decides; a set value is kept', () => {
    const base = { KAFKA_BROKERS: 'localhost:9092', SCHEMA_REGISTRY_URL: 'http://localhost:8081', ENRICHMENT_API_URL: 'http://localhost:8080' }
    expect(loadConfig('transaction-ingest', INGEST_ENV, base).INGEST_CONCURRENCY).toBeUndefined()
    expect(loadConfig('transaction-ingest', INGEST_ENV, { ...base, INGEST_CONCURRENCY: '300' }).INGEST_CONCURRENCY).toBe(300)
  })
})
