import { DLQ_HEADERS } from '@tep/kafka'
import { describe, expect, it } from 'vitest'
import { dlqEntry, parseDlqId, REDRIVE_HEADERS, redriveHeaders } from './dlq-entry.ts'

const scanned = {
  key: Buffer.from('tx-1'),
  value: Buffer.from('v'),
  offset: '42',
  timestamp: '1000',
  headers: {
    [DLQ_HEADERS.errorCode]: Buffer.from('AVRO_UNKNOWN_SCHEMA_ID'),
    [DLQ_HEADERS.sourceTopic]: Buffer.from('transactions.raw.v1'),
    [DLQ_HEADERS.sourcePartition]: Buffer.from('2'),
    [DLQ_HEADERS.sourceOffset]: Buffer.from('17'),
    [DLQ_HEADERS.failedAt]: Buffer.from('2026-11-28T10:00:00.000Z'),
    'tep-correction': Buffer.from('inv-1'),
    [REDRIVE_HEADERS.id]: Buffer.from('redrive-old'),
  },
}

describe('DLQ entries', () => {
  it('reads the dlq.* headers: reason, source position, failure time', () => {
    expect(dlqEntry(scanned, 3)).toMatchObject({
      id: '3:42',
      code: 'AVRO_UNKNOWN_SCHEMA_ID',
      sourceTopic: 'transactions.raw.v1',
      sourcePartition: 2,
      sourceOffset: '17',
      failedAt: Date.parse('2026-11-28T10:00:00.000Z'),
      maskedPans: 0,
    })
    expect(dlqEntry({ ...scanned, headers: {} }, 0)).toMatchObject({ code: '(no code)', failedAt: 1000, sourceTopic: undefined })
  })

  it('re-drives with the record own headers, without the diagnosis or an earlier re-drive mark, naming this re-drive and the DLQ position', () => {
    expect(redriveHeaders('transactions.dlq.v1', dlqEntry(scanned, 3), 'redrive-new')).toEqual({
      'tep-correction': Buffer.from('inv-1'),
      'tep-redrive-id': 'redrive-new',
      'tep-redrive-from': 'transactions.dlq.v1/3/42',
    })
  })

  it('parses partition:offset ids', () => {
    expect(parseDlqId('3:0042')).toEqual({ partition: 3, offset: '42' })
    expect(parseDlqId('tx-1')).toBeUndefined()
  })
})
