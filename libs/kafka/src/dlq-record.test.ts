import { PipelineError } from '@tep/errors'
import { describe, expect, it } from 'vitest'
import {
  buildDlqHeaders,
  createDlqRecord,
  DLQ_HEADERS,
  DLQ_MESSAGE_MAX_CHARS,
  readDlqHeaders,
} from './dlq-record.ts'
import { UNDECODABLE_CODES, UndecodableRecordError } from './errors.ts'

const source = {
  topic: 'transactions.raw.v1',
  partition: 3,
  offset: '41',
  timestamp: '1769870000000',
  key: Buffer.from('tx-1'),
  value: Buffer.from([1, 2, 3]),
  headers: { traceparent: Buffer.from('00-abc'), 'dlq.error.code': 'OLD' },
}
const failedAt = new Date('2026-01-31T14:30:00.000Z')

describe('createDlqRecord', () => {
  it('keeps key, value and own headers untouched and adds the dlq.* headers', () => {
    const error = new UndecodableRecordError('bad magic byte', UNDECODABLE_CODES.badMagicByte)
    const record = createDlqRecord('transactions.dlq.v1', source, {
      error,
      attempts: 2,
      consumerGroup: 'ingest',
      failedAt,
    })
    expect(record.topic).toBe('transactions.dlq.v1')
    expect(record.key).toBe(source.key)
    expect(record.value).toBe(source.value)
    expect(record.headers.traceparent).toBe(source.headers.traceparent)
    expect(readDlqHeaders(record.headers)).toEqual({
      errorCode: 'AVRO_BAD_MAGIC_BYTE',
      errorMessage: 'bad magic byte',
      errorName: 'UndecodableRecordError',
      sourceTopic: 'transactions.raw.v1',
      sourcePartition: '3',
      sourceOffset: '41',
      sourceTimestamp: '1769870000000',
      consumerGroup: 'ingest',
      attempts: '2',
      failedAt: '2026-01-31T14:30:00.000Z',
    })
  })

  it('replaces dlq.* headers from an earlier trip to the DLQ', () => {
    const record = createDlqRecord('dlq', source, {
      error: new PipelineError('x', { code: 'NEW' }),
      attempts: 1,
      failedAt,
    })
    expect(record.headers[DLQ_HEADERS.errorCode]).toBe('NEW')
  })
})

describe('buildDlqHeaders', () => {
  it('uses UNEXPECTED for foreign errors and an explicit code when given', () => {
    expect(
      buildDlqHeaders(source, { error: new TypeError('boom'), attempts: 1, failedAt })[DLQ_HEADERS.errorCode],
    ).toBe('UNEXPECTED')
    expect(buildDlqHeaders(source, { error: 'text', code: 'MY_CODE', attempts: 1, failedAt })).toMatchObject({
      [DLQ_HEADERS.errorCode]: 'MY_CODE',
      [DLQ_HEADERS.errorMessage]: 'text',
      [DLQ_HEADERS.errorName]: 'string',
    })
  })

  it('truncates long messages to a bounded header', () => {
    const message = buildDlqHeaders(source, { error: new Error('x'.repeat(5000)), attempts: 1, failedAt })[
      DLQ_HEADERS.errorMessage
    ]!
    expect(message.length).toBe(DLQ_MESSAGE_MAX_CHARS - 14 + '...[truncated]'.length)
    expect(message.endsWith('...[truncated]')).toBe(true)
  })
})
