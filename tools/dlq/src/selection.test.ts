import { describe, expect, it } from 'vitest'
import { DlqSelectionError, RedriveRefusedError } from './errors.ts'
import { Ledger } from './ledger.ts'
import { selectForRedrive } from './selection.ts'
import { entry, ledgerWith } from './test-entries.ts'

const DLQ = 'transactions.dlq.v1'
const H = 3_600_000
const entries = [
  entry(0, 'AVRO_UNKNOWN_SCHEMA_ID', 5 * H),
  entry(1, 'RAW_INVALID_FIELD', 1 * H),
  entry(2, 'AVRO_UNKNOWN_SCHEMA_ID', 2 * H),
  entry(3, 'AVRO_UNKNOWN_SCHEMA_ID', 3 * H, { sourceTopic: 'merchant.invalidations.v1' }),
  entry(4, 'AVRO_UNKNOWN_SCHEMA_ID', 4 * H),
]
const select = (filter: Parameters<typeof selectForRedrive>[1]['filter'], over: Partial<Parameters<typeof selectForRedrive>[1]> = {}) =>
  selectForRedrive(entries, { dlqTopic: DLQ, filter, ledger: new Ledger(), forceAgain: false, ...over })
const ids = (s: ReturnType<typeof selectForRedrive>) => s.selected.map((e) => e.id)

describe('selectForRedrive', () => {
  it('selects by reason, time range and source topic, oldest failure first', () => {
    expect(ids(select({ reasons: ['AVRO_UNKNOWN_SCHEMA_ID'] }))).toEqual(['0:2', '0:3', '0:4', '0:0'])
    expect(ids(select({ reasons: ['AVRO_UNKNOWN_SCHEMA_ID'], since: 3 * H, until: 4 * H }))).toEqual(['0:3', '0:4'])
    expect(ids(select({ sourceTopics: ['merchant.invalidations.v1'] }))).toEqual(['0:3'])
    expect(ids(select({ ids: ['0:4', '0:1'] }))).toEqual(['0:1', '0:4'])
  })

  it('takes at most --max records and says how many it left for later', () => {
    const s = select({ reasons: ['AVRO_UNKNOWN_SCHEMA_ID'] }, { max: 3 })
    expect(ids(s)).toEqual(['0:2', '0:3', '0:4'])
    expect(s).toMatchObject({ matched: 4, overBudget: 1 })
  })

  it('refuses a reason no record has, listing the reasons present', () => {
    expect(() => select({ reasons: ['AVRO_UNKNOWN_SCHEMA'] })).toThrow(DlqSelectionError)
    expect(() => select({ reasons: ['AVRO_UNKNOWN_SCHEMA'] })).toThrow(/no DLQ record has the reason AVRO_UNKNOWN_SCHEMA; reasons on the DLQ: AVRO_UNKNOWN_SCHEMA_ID \(4\), RAW_INVALID_FIELD \(1\)/)
  })

  it('refuses an id that is not on the DLQ and a selection that matches nothing', () => {
    expect(() => select({ ids: ['0:99'] })).toThrow(/no DLQ record at 0:99/)
    expect(() => select({ reasons: ['RAW_INVALID_FIELD'], since: 2 * H })).toThrow(/the selection matches no DLQ record/)
  })

  it('leaves records the ledger names out of a filter selection and re-drives the rest', () => {
    const s = select({ reasons: ['AVRO_UNKNOWN_SCHEMA_ID'] }, { ledger: ledgerWith(DLQ, ['0:2', '0:3']) })
    expect(ids(s)).toEqual(['0:4', '0:0'])
    expect(s.alreadyRedriven.map((a) => a.entry.id)).toEqual(['0:2', '0:3'])
  })

  it('refuses a second re-drive: every matching record already re-driven, or one named by id', () => {
    const ledger = ledgerWith(DLQ, ['0:0', '0:2', '0:3', '0:4'])
    expect(() => select({ reasons: ['AVRO_UNKNOWN_SCHEMA_ID'] }, { ledger })).toThrow(RedriveRefusedError)
    expect(() => select({ reasons: ['AVRO_UNKNOWN_SCHEMA_ID'] }, { ledger })).toThrow(/re-driven before: 0:0 \(redrive redrive-1 by alice at 2026-11-28T10:00:00.000Z\).*--force-again/)
    expect(() => select({ ids: ['0:1', '0:4'] }, { ledger })).toThrow(/refused: 1 selected DLQ record\(s\) were re-driven before: 0:4/)
  })

  it('re-drives them again with --force-again', () => {
    const ledger = ledgerWith(DLQ, ['0:0', '0:2', '0:3', '0:4'])
    expect(ids(select({ ids: ['0:4'] }, { ledger, forceAgain: true }))).toEqual(['0:4'])
  })

  it('reads the ledger per DLQ topic: a re-drive of another DLQ topic does not count', () => {
    expect(ids(select({ ids: ['0:4'] }, { ledger: ledgerWith('other.dlq', ['0:4']) }))).toEqual(['0:4'])
  })

  it('leaves out records whose bytes masking altered, and records without a source topic', () => {
    const odd = [entry(0, 'C', 1, { maskedPans: 1 }), entry(1, 'C', 2, { sourceTopic: undefined }), entry(2, 'C', 3)]
    const s = selectForRedrive(odd, { dlqTopic: DLQ, filter: { reasons: ['C'] }, ledger: new Ledger(), forceAgain: false })
    expect(ids(s)).toEqual(['0:2'])
    expect(s.masked.map((e) => e.id)).toEqual(['0:0'])
    expect(s.noSource.map((e) => e.id)).toEqual(['0:1'])
    expect(() => selectForRedrive(odd.slice(0, 2), { dlqTopic: DLQ, filter: { reasons: ['C'] }, ledger: new Ledger(), forceAgain: false })).toThrow(
      /nothing to re-drive: of 2 matching record\(s\), 1 had card numbers masked.*; 1 have no dlq.source.topic header/,
    )
  })
})
