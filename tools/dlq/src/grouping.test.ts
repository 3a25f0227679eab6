import { describe, expect, it } from 'vitest'
import { groupEntries, groupsTable } from './grouping.ts'
import { Ledger } from './ledger.ts'
import { entry, ledgerWith } from './test-entries.ts'

const DLQ = 'transactions.dlq.v1'
const H = 3_600_000
const T0 = Date.parse('2026-11-28T10:00:00Z')

describe('groupEntries', () => {
  const entries = [
    entry(0, 'RAW_INVALID_FIELD', T0 + 10 * 60_000),
    entry(1, 'AVRO_UNKNOWN_SCHEMA_ID', T0 + 5 * 60_000),
    entry(2, 'AVRO_UNKNOWN_SCHEMA_ID', T0 + 50 * 60_000),
    entry(3, 'AVRO_UNKNOWN_SCHEMA_ID', T0 + H + 1),
    entry(4, 'AVRO_UNKNOWN_SCHEMA_ID', T0 + 20 * 60_000, { sourceTopic: undefined }),
  ]

  it('counts per reason, source topic and time bucket, sorted that way, with first and last record', () => {
    expect(groupEntries(entries, H, new Ledger(), DLQ)).toEqual([
      { reason: 'AVRO_UNKNOWN_SCHEMA_ID', sourceTopic: '(unknown)', bucket: '2026-11-28T10:00:00.000Z', count: 1, redriven: 0, first: '0:4', last: '0:4' },
      { reason: 'AVRO_UNKNOWN_SCHEMA_ID', sourceTopic: 'transactions.raw.v1', bucket: '2026-11-28T10:00:00.000Z', count: 2, redriven: 0, first: '0:1', last: '0:2' },
      { reason: 'AVRO_UNKNOWN_SCHEMA_ID', sourceTopic: 'transactions.raw.v1', bucket: '2026-11-28T11:00:00.000Z', count: 1, redriven: 0, first: '0:3', last: '0:3' },
      { reason: 'RAW_INVALID_FIELD', sourceTopic: 'transactions.raw.v1', bucket: '2026-11-28T10:00:00.000Z', count: 1, redriven: 0, first: '0:0', last: '0:0' },
    ])
  })

  it('puts everything of a day in one group with a day bucket, and counts what the ledger re-drove', () => {
    const groups = groupEntries(entries.slice(1, 4), 24 * H, ledgerWith(DLQ, ['0:1', '0:3']), DLQ)
    expect(groups).toMatchObject([{ bucket: '2026-11-28T00:00:00.000Z', count: 3, redriven: 2 }])
  })

  it('prints an aligned table with totals', () => {
    const text = groupsTable(groupEntries(entries.slice(0, 2), H, new Ledger(), DLQ))
    expect(text.split('\n')).toEqual([
      'REASON                  SOURCE TOPIC         FROM (UTC)            COUNT  RE-DRIVEN  FIRST  LAST',
      'AVRO_UNKNOWN_SCHEMA_ID  transactions.raw.v1  2026-11-28T10:00:00Z      1          0  0:1    0:1',
      'RAW_INVALID_FIELD       transactions.raw.v1  2026-11-28T10:00:00Z      1          0  0:0    0:0',
      '2 record(s) in 2 group(s), 0 re-driven',
    ])
  })
})
