import { describe, expect, it } from 'vitest'
import { compareTopics, type DlqRecord, type KeyedRecord } from './compare.ts'

const raw = (...keys: Array<string | null>): KeyedRecord[] => keys.map((key, i) => ({ key, timestamp: 1_000 + i }))
const out = (...keys: string[]): KeyedRecord[] => keys.map((key) => ({ key, timestamp: 5_000 }))
const dlq = (key: string, code?: string): DlqRecord => ({ key, timestamp: 5_000, code })

describe('compareTopics', () => {
  it('passes when every raw record has exactly one enriched or DLQ record', () => {
    const s = compareTopics({ raw: raw('a', 'b', 'c'), enriched: out('a', 'c'), dlq: [dlq('b', 'AVRO_BAD_MAGIC_BYTE')] })
    expect(s).toMatchObject({ passed: true, lost: 0, duplicated: 0, dlqFromFaults: 0, unexpected: 0 })
    expect(s.dlq).toMatchObject({ records: 1, recordSpecific: 1, byCode: { AVRO_BAD_MAGIC_BYTE: 1 } })
  })

  it('counts a DLQ record whose key was masked under the raw record its source headers name', () => {
    // `tx-1795896012596-5`: the 13-digit epoch passes the Luhn check, so the DLQ writer masks it in the key.
    const rawRecords = [
      { key: 'tx-1795896012596-5', timestamp: 1_000, position: 'raw/0/7' },
      { key: 'tx-2', timestamp: 1_001, position: 'raw/1/3' },
    ]
    const masked: DlqRecord = { key: 'tx-179589***2596-5', timestamp: 5_000, code: 'AVRO_BAD_MAGIC_BYTE', source: 'raw/0/7' }
    const s = compareTopics({ raw: rawRecords, enriched: out('tx-2'), dlq: [masked] })
    expect(s).toMatchObject({ passed: true, lost: 0, unexpected: 0, dlq: { keysFromSource: 1, recordSpecific: 1 } })
    // A source that names no raw record read leaves the key as it is: still unexpected.
    const stray = compareTopics({ raw: rawRecords, enriched: out('tx-2'), dlq: [{ ...masked, source: 'raw/0/8' }] })
    expect(stray).toMatchObject({ passed: false, lost: 1, unexpected: 1, dlq: { keysFromSource: 0 } })
  })

  it('expects an outcome for every raw record of a checked key, also one published again after the window (a re-enrichment)', () => {
    // 'a' is checked (raw at 1,000, in the window) and re-published at 9,000 by the refresher's re-enrichment: two outcomes are right.
    const rawRecords = [
      { key: 'a', timestamp: 1_000 },
      { key: 'b', timestamp: 1_001 },
      { key: 'a', timestamp: 9_000 },
    ]
    const s = compareTopics({ raw: rawRecords, enriched: out('a', 'b', 'a'), dlq: [], window: { from: 500, to: 2_000 } })
    expect(s).toMatchObject({ passed: true, lost: 0, duplicated: 0, raw: { inWindow: 2 } })
    // Its second raw record without an outcome is a loss, as any other.
    const missing = compareTopics({ raw: rawRecords, enriched: out('a', 'b'), dlq: [], window: { from: 500, to: 2_000 } })
    expect(missing).toMatchObject({ passed: false, lost: 1, duplicated: 0 })
  })

  it('reports one loss and one duplicate by key', () => {
    const s = compareTopics({ raw: raw('a', 'b', 'c'), enriched: out('a', 'a', 'c'), dlq: [] })
    expect(s).toMatchObject({ passed: false, lost: 1, duplicated: 1 })
    expect(s.samples).toMatchObject({ lost: ['b'], duplicated: ['a'] })
  })

  it('counts an enriched and a DLQ record for the same key as a duplicate', () => {
    const s = compareTopics({ raw: raw('a'), enriched: out('a'), dlq: [dlq('a', 'RAW_INVALID_FIELD')] })
    expect(s).toMatchObject({ passed: false, duplicated: 1, lost: 0 })
  })

  it('expects as many outcomes as a key has raw records', () => {
    expect(compareTopics({ raw: raw('a', 'a'), enriched: out('a', 'a'), dlq: [] })).toMatchObject({ passed: true, raw: { repeatedKeys: 1 } })
    expect(compareTopics({ raw: raw('a', 'a'), enriched: out('a'), dlq: [] })).toMatchObject({ passed: false, lost: 1 })
  })

  it('fails on DLQ records whose code is not about the record, and on records without a code', () => {
    const s = compareTopics({
      raw: raw('a', 'b', 'c'),
      enriched: [],
      dlq: [dlq('a', 'ENRICHMENT_SERVER_ERROR'), dlq('b'), dlq('c', 'EVENT_INVALID')],
    })
    expect(s).toMatchObject({ passed: false, lost: 0, duplicated: 0, dlqFromFaults: 2, dlq: { recordSpecific: 1, fromFaults: 2 } })
    expect(s.samples.dlqFromFaults).toEqual([
      { key: 'a', code: 'ENRICHMENT_SERVER_ERROR' },
      { key: 'b', code: '(no dlq.error.code header)' },
    ])
  })

  it('takes the record-specific codes it is given', () => {
    const s = compareTopics({ raw: raw('a'), enriched: [], dlq: [dlq('a', 'MY_CODE')], recordSpecificCodes: ['MY_CODE'] })
    expect(s.passed).toBe(true)
  })

  it('reports outcomes whose key never was on the raw topic', () => {
    const s = compareTopics({ raw: raw('a'), enriched: out('a', 'zz'), dlq: [] })
    expect(s).toMatchObject({ passed: false, unexpected: 1, samples: { unexpected: ['zz'] } })
  })

  it('compares null keys like any other key', () => {
    expect(compareTopics({ raw: raw(null), enriched: [], dlq: [{ key: null, timestamp: 1, code: 'AVRO_BAD_MAGIC_BYTE' }] }).passed).toBe(true)
    expect(compareTopics({ raw: raw(null), enriched: [], dlq: [] }).samples.lost).toEqual(['<null key>'])
  })

  it('checks only raw records in the window but finds their outcomes anywhere, and ignores outcomes of raw records outside it', () => {
    // timestamps 1000 (a), 1001 (b), 1002 (c); only b is in the window; a is lost but out of scope; c is doubled but out of scope.
    const s = compareTopics({ raw: raw('a', 'b', 'c'), enriched: out('b', 'c', 'c'), dlq: [dlq('c', 'ENRICHMENT_SERVER_ERROR')], window: { from: 1_001, to: 1_001 } })
    expect(s).toMatchObject({ passed: true, raw: { records: 3, inWindow: 1 }, lost: 0, duplicated: 0, dlqFromFaults: 0 })
  })

  it('fails when a decoded transactionId differs from the key', () => {
    const s = compareTopics({ raw: raw('a'), enriched: [{ key: 'a', timestamp: 1, transactionId: 'b', status: 'MATCHED' }], dlq: [] })
    expect(s).toMatchObject({ passed: false, keyMismatches: 1, enriched: { byStatus: { MATCHED: 1 } } })
  })

  describe('re-driven records (npm run dlq -- redrive)', () => {
    const P = 'dlq/0/7'
    const dead = (code = 'ENRICHMENT_SERVER_ERROR'): DlqRecord => ({ key: 'a', timestamp: 2_000, code, position: P })
    const redriven = (timestamp = 9_000, from = P) => ({ key: 'a', timestamp, redriveFrom: from })

    it('accounts raw -> DLQ -> re-driven -> enriched as one event with one outcome, whatever the DLQ code was', () => {
      const s = compareTopics({ raw: [...raw('a', 'b'), redriven()], enriched: out('a', 'b'), dlq: [dead()] })
      expect(s).toMatchObject({ passed: true, lost: 0, duplicated: 0, dlqFromFaults: 0, redriven: { records: 1, superseded: 1, untraced: 0 } })
    })

    it('keeps the chain whole when the window holds only the first occurrence', () => {
      const s = compareTopics({ raw: [...raw('a'), redriven(50_000)], enriched: out('a'), dlq: [dead('RAW_INVALID_FIELD')], window: { from: 0, to: 10_000 } })
      expect(s).toMatchObject({ passed: true, duplicated: 0, lost: 0, raw: { inWindow: 1 } })
    })

    it('accepts a re-driven record that was dead-lettered again as its one outcome', () => {
      const again: DlqRecord = { key: 'a', timestamp: 9_500, code: 'RAW_INVALID_FIELD', position: 'dlq/0/9' }
      expect(compareTopics({ raw: [...raw('a'), redriven()], enriched: [], dlq: [dead('RAW_INVALID_FIELD'), again] })).toMatchObject({ passed: true, lost: 0, duplicated: 0 })
    })

    it('reports a re-driven record without outcome as lost', () => {
      expect(compareTopics({ raw: [...raw('a'), redriven()], enriched: [], dlq: [dead('RAW_INVALID_FIELD')] })).toMatchObject({ passed: false, lost: 1, samples: { lost: ['a'] } })
    })

    it('reports the second outcome of a second re-drive of the same DLQ record as a duplicate', () => {
      const s = compareTopics({ raw: [...raw('a'), redriven(), redriven(9_900)], enriched: out('a', 'a'), dlq: [dead('RAW_INVALID_FIELD')] })
      expect(s).toMatchObject({ passed: false, duplicated: 1, redriven: { records: 2, superseded: 1 } })
    })

    it('checks a re-driven record whose DLQ record is gone (retention) as a new raw record', () => {
      const s = compareTopics({ raw: [redriven(9_000, 'dlq/3/1')], enriched: out('a'), dlq: [] })
      expect(s).toMatchObject({ passed: true, raw: { inWindow: 1 }, redriven: { records: 1, superseded: 0, untraced: 1 } })
    })
  })
})
