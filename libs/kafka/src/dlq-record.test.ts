import { PipelineError } from '@tep/errors'
// The card-number generators of the masking's own property tests, so the DLQ is held to
// the same cases; a test-only entry point (fast-check is a devDependency), never in src code.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import { hiddenIndexes, prefix, suffix, writtenPan } from '@tep/observability/testing'
import fc from 'fast-check'
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

describe('card numbers on the DLQ', () => {
  // A Luhn-valid test PAN, written into an Avro string field of a raw event.
  const PAN = '4111111111111111'

  it('are masked in the value and key, keeping the length and the rest of the bytes', () => {
    const value = Buffer.concat([Buffer.from([0, 0, 0, 0, 7, 32]), Buffer.from(PAN), Buffer.from([2, 0x41])])
    const record = createDlqRecord('transactions.dlq.v1', { ...source, key: Buffer.from(`k ${PAN}`), value }, {
      error: new Error(`cardBin must be at most 8 digits, got 16 (${PAN})`),
      attempts: 1,
      failedAt,
    })
    expect(record.value!.length).toBe(value.length)
    expect(record.value!.subarray(0, 6)).toEqual(value.subarray(0, 6))
    expect(record.value!.subarray(6, 22).toString()).toBe('411111******1111')
    expect(record.value!.subarray(22)).toEqual(value.subarray(22))
    expect(record.key!.toString()).toBe('k 411111******1111')
    const headers = readDlqHeaders(record.headers)
    expect(headers.masked).toBe('2')
    expect(headers.errorMessage).toBe('cardBin must be at most 8 digits, got 16 (41111*******1111)')
    expect(JSON.stringify(record)).not.toContain(PAN)
  })

  it('are masked in the source headers too, and counted', () => {
    const record = createDlqRecord('transactions.dlq.v1', {
      ...source,
      headers: { note: `card ${PAN} exp 12/27`, refs: [Buffer.from(`ref 7 ${PAN}`), 'none'] },
    }, { error: new Error('x'), attempts: 1, failedAt })
    expect(record.headers.note).toBe('card 411111******1111 exp 12/27')
    expect((record.headers.refs as Buffer[])[0]!.toString()).toBe('ref 7 41111*******1111')
    expect((record.headers.refs as unknown[])[1]).toBe('none')
    // Windows counted: '7 4111...' holds two Luhn-valid ones (with and without the 7).
    expect(readDlqHeaders(record.headers).masked).toBe('3')
  })

  it('never survive in a DLQ record, wherever they are and however they are written (property)', () => {
    fc.assert(
      fc.property(prefix, writtenPan, suffix, fc.constantFrom('key', 'value', 'header', 'reason'), (before, { digits, text }, after, where) => {
        const payload = Buffer.from(before + text + after)
        const record = createDlqRecord(
          'transactions.dlq.v1',
          {
            ...source,
            key: where === 'key' ? payload : source.key,
            value: where === 'value' ? payload : source.value,
            headers: where === 'header' ? { description: payload.toString() } : {},
          },
          { error: new Error(where === 'reason' ? payload.toString() : 'x'), attempts: 1, failedAt },
        )
        const headers = readDlqHeaders(record.headers)
        const out =
          where === 'key' ? record.key!.toString() :
          where === 'value' ? record.value!.toString() :
          where === 'header' ? String(record.headers.description) :
          headers.errorMessage!
        const start = Buffer.byteLength(before)
        const masked = Buffer.from(out).subarray(start, start + text.length).toString()
        for (const i of hiddenIndexes(text)) expect(masked[i], `${where}: ${out}`).toBe('*')
        expect(out.replace(/[ -]/g, '')).not.toContain(digits)
        if (where !== 'reason') expect(Number(headers.masked)).toBeGreaterThanOrEqual(1)
      }),
      { numRuns: 1000 },
    )
  })

  it('leave other digit runs alone (offsets, amounts, ids with no Luhn-valid window)', () => {
    const value = Buffer.from('offset 123456789012 amount 1234567890123')
    const record = createDlqRecord('transactions.dlq.v1', { ...source, value }, { error: new Error('x'), attempts: 1, failedAt })
    expect(record.value).toBe(value)
    expect(readDlqHeaders(record.headers).masked).toBeUndefined()
  })
})
