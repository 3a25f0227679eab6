import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { readRows, type FileRow } from './file-rows.ts'
import { jsonToFields, rowToRaw, RowRejection } from './row-mapping.ts'

const card = {
  transactionId: 't1',
  occurredAt: '2025-03-01T10:15:00Z',
  amount: '12.50',
  currency: 'CZK',
  creditDebit: 'DEBIT',
  'card.merchantId': 'M1',
}

function rejection(fields: Record<string, string | null>): { code: string; message: string } {
  try {
    rowToRaw(fields)
  } catch (err) {
    if (err instanceof RowRejection) return { code: err.code, message: err.message }
    throw err
  }
  throw new Error('the row was accepted')
}

async function all(path: string, format: 'csv' | 'jsonl', after = 0): Promise<FileRow[]> {
  const rows: FileRow[] = []
  for await (const r of readRows(path, format, after)) rows.push(r)
  return rows
}

describe('rowToRaw', () => {
  it('builds a valid raw card event with defaults for source, receivedAt and refresh', () => {
    const raw = rowToRaw(card)
    expect(raw).toMatchObject({
      transactionId: 't1',
      source: 'BACKFILL',
      occurredAt: Date.parse('2025-03-01T10:15:00Z'),
      receivedAt: Date.parse('2025-03-01T10:15:00Z'),
      refresh: false,
      transfer: null,
    })
    expect(raw.card).toMatchObject({ merchantId: 'M1', city: null })
  })

  it('keeps an empty value present and an absent one null', () => {
    const raw = rowToRaw({ ...card, 'card.city': '', 'card.country': null })
    expect(raw.card?.city).toBe('')
    expect(raw.card?.country).toBeNull()
  })

  it('refuses a time without a zone, a missing field, a bad amount, and both card and transfer, each with its own code', () => {
    expect(rejection({ ...card, occurredAt: '2025-03-01T10:15:00' }).code).toBe('ROW_INVALID_VALUE')
    expect(rejection({ ...card, currency: '' }).code).toBe('ROW_MISSING_FIELD')
    expect(rejection({ ...card, amount: '12,50' })).toMatchObject({ code: 'RAW_INVALID_FIELD' })
    expect(rejection({ ...card, 'transfer.scheme': 'SEPA' }).code).toBe('RAW_CARD_AND_TRANSFER')
    expect(rejection({ ...card, 'card.cardBin': '4111111111111111' }).message).not.toContain('4111')
  })

  it('reads nested JSON objects and refuses numbers for money', () => {
    expect(rowToRaw(jsonToFields({ ...card, 'card.merchantId': undefined, card: { merchantId: 'M2' } })).card?.merchantId).toBe(
      'M2',
    )
    expect(() => jsonToFields({ ...card, amount: 12.5 })).toThrow(/money is never a JSON number/)
    expect(() => jsonToFields({ ...card, colour: 'red' })).toThrow(/unknown field colour/)
  })
})

describe('readRows', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rows-'))

  it('reads gzipped CSV with line numbers, quoted empty cells as "", and resumes after a line', async () => {
    const csv = [
      'transactionId,occurredAt,amount,currency,creditDebit,card.merchantId,card.city',
      't1,2025-03-01T10:15:00Z,1.00,CZK,DEBIT,M1,""',
      't2,2025-03-01T10:15:00Z,1.00,CZK,DEBIT,M1,',
      't3,2025-03-01T10:15:00Z',
    ].join('\n')
    const path = join(dir, 'in.csv.gz')
    writeFileSync(path, gzipSync(csv))
    const rows = await all(path, 'csv')
    expect(rows.map((r) => r.line)).toEqual([2, 3, 4])
    expect(rows[0]).toMatchObject({ fields: { 'card.city': '' } })
    expect(rows[1]).toMatchObject({ fields: { 'card.city': null } })
    expect(rows[2]).toMatchObject({ rejection: { code: 'ROW_UNPARSABLE' } })
    expect((await all(path, 'csv', 3)).map((r) => r.line)).toEqual([4])
  })

  it('refuses a CSV header with an unknown column', async () => {
    const path = join(dir, 'bad-header.csv')
    writeFileSync(path, 'transactionId,amount,colour\n')
    await expect(all(path, 'csv')).rejects.toThrow(/unknown column\(s\) colour/)
  })

  it('reads JSON Lines, skipping blank lines and rejecting a line that is not JSON', async () => {
    const path = join(dir, 'in.jsonl')
    writeFileSync(path, `${JSON.stringify(card)}\n\n{nope\n`)
    const rows = await all(path, 'jsonl')
    expect(rows.map((r) => r.line)).toEqual([1, 3])
    expect(rows[1]).toMatchObject({ rejection: { code: 'ROW_UNPARSABLE' } })
  })
})
