import { SCHEMA_NAMES } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { KafkaConfigError } from './errors.ts'
import { TOPIC_CATALOG, TOPICS, topicCatalog, topicSpec } from './topic-catalog.ts'

describe('topic catalog', () => {
  it('holds every named topic exactly once', () => {
    const names = TOPIC_CATALOG.map((t) => t.name)
    expect(new Set(names).size).toBe(names.length)
    expect([...names].sort()).toEqual(Object.values(TOPICS).sort())
  })

  it('follows ARCHITECTURE §3 for cleanup policies', () => {
    const compacted = TOPIC_CATALOG.filter((t) => t.cleanupPolicy === 'compact')
      .map((t) => t.name)
      .sort()
    expect(compacted).toEqual(
      [
        TOPICS.bankConsents,
        TOPICS.merchantInvalidationsCursor,
        TOPICS.merchantMerchants,
        TOPICS.merchantShops,
      ].sort(),
    )
    for (const t of TOPIC_CATALOG.filter((t) => t.cleanupPolicy === 'compact')) {
      expect(t.configs).toMatchObject({ 'min.cleanable.dirty.ratio': '0.1', 'segment.ms': '3600000' })
      expect(t.configs['retention.ms']).toBeUndefined()
    }
  })

  it('names an existing schema for every Avro topic; only the DLQ and its re-drive ledger have none', () => {
    for (const t of TOPIC_CATALOG) {
      if (t.name === TOPICS.transactionsDlq || t.name === TOPICS.transactionsDlqRedrives) expect(t.valueSchema).toBeNull()
      else expect(SCHEMA_NAMES).toContain(t.valueSchema)
    }
  })

  it('sizes partitions by option but keeps the cursor topic on one partition', () => {
    const small = topicCatalog({ partitions: 2, retentionMs: 1000 })
    expect(small.find((t) => t.name === TOPICS.transactionsRaw)).toMatchObject({
      partitions: 2,
      configs: { 'retention.ms': '1000' },
    })
    expect(small.find((t) => t.name === TOPICS.merchantInvalidationsCursor)?.partitions).toBe(1)
  })

  it('looks topics up by name with a helpful error', () => {
    expect(topicSpec(TOPICS.merchantShops).valueSchema).toBe('Shop')
    expect(() => topicSpec('nope')).toThrow(KafkaConfigError)
    expect(() => topicSpec('nope')).toThrow(/known topics: transactions\.raw\.v1/)
  })
})
