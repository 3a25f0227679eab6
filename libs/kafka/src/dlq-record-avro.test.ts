// The card-number generators of the masking's own property tests, so the DLQ is held to
// the same cases; a test-only entry point (fast-check is a devDependency), never in src code.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import { avroStringLength, gluedPrefix, gluedSuffix, hostilePan, readableDigits } from '@tep/observability/testing'
import { avroSchemas, type RawTransaction } from '@tep/schemas'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { confluentFrame } from './avro-serde.ts'
import { createDlqRecord, readDlqHeaders } from './dlq-record.ts'

const PAN = '4111111111111111'
const IBAN = 'CZ6508000000192000145399'
const SCHEMA_ID = 7
const rawType = avroSchemas.RawTransaction.type
const valueSchema = (id: number) => (id === SCHEMA_ID ? rawType : undefined)

function cardRecord(card: Partial<NonNullable<RawTransaction['card']>>): RawTransaction {
  return {
    transactionId: 'tx-1', source: 'CARD_PROCESSOR', sourceReference: null, customerId: null, accountId: null,
    occurredAt: 1_769_870_000_000, receivedAt: 1_769_870_000_000, amount: '12.50', currency: 'CZK', creditDebit: 'DEBIT',
    refresh: false, transfer: null,
    card: {
      merchantId: null, terminalId: null, description: null, street: null, city: null, postalCode: null, country: null,
      mcc: null, acquirerId: null, transactionAmount: null, transactionCurrency: null, localDateTime: null,
      processingCode: null, posEntryMode: null, cardBin: '411111', ...card,
    },
  }
}

function toDlq(value: Buffer, withSchema: boolean) {
  return createDlqRecord(
    'transactions.dlq.v1',
    { topic: 'transactions.raw.v1', partition: 0, offset: '1', key: Buffer.from('tx-1'), value },
    { error: new Error(`payee ${IBAN} EUR card ${PAN}`), attempts: 1 },
    withSchema ? { valueSchema } : {},
  )
}

/** Every string of a decoded value, at any depth. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v]
  if (v === null || typeof v !== 'object') return []
  return Object.values(v).flatMap(strings)
}

describe('an Avro record on the DLQ', () => {
  it('has no card number in clear when card.description is a card number and text of 25-28 characters (third review, High)', () => {
    for (const length of [25, 26, 27, 28, 29]) {
      const description = `${PAN} SHOP PRAHA`.padEnd(length, 'X').slice(0, length)
      const value = confluentFrame(SCHEMA_ID, rawType.toBuffer(cardRecord({ description })))
      for (const withSchema of [true, false]) {
        const dlq = toDlq(value, withSchema)
        expect(readableDigits(dlq.value!.toString('utf8')), `length ${length}, schema ${withSchema}`).not.toContain(PAN)
        expect(Number(readDlqHeaders(dlq.headers).masked)).toBeGreaterThanOrEqual(1)
      }
    }
  })

  it('is masked field by field when its schema is known: it still decodes, other fields untouched', () => {
    const raw = cardRecord({ description: `４１１１ １１１１ １１１１ １１１１ SHOP`, merchantId: `M${PAN}`, city: 'PRAHA' })
    const dlq = toDlq(confluentFrame(SCHEMA_ID, rawType.toBuffer(raw)), true)
    expect(dlq.value!.subarray(0, 5)).toEqual(confluentFrame(SCHEMA_ID, Buffer.alloc(0)))
    const back = rawType.fromBuffer(dlq.value!.subarray(5)) as RawTransaction
    expect(back.card!.description).toBe('４１１１ １１** **** １１１１ SHOP')
    expect(back.card!.merchantId).toBe('M411111******1111')
    expect({ ...back, card: { ...back.card, description: null, merchantId: null } }).toEqual({
      ...raw,
      card: { ...raw.card, description: null, merchantId: null },
    })
    expect(readDlqHeaders(dlq.headers).masked).toBe('2')
  })

  it('has its reason masked: card numbers and IBANs', () => {
    const reason = readDlqHeaders(toDlq(Buffer.from('x'), false).headers).errorMessage!
    expect(reason).toBe('payee CZ******************5399 EUR card 411111******1111')
  })

  it('never carries a card number in clear, in any string field of any length 1-4,000, with or without its schema (property)', () => {
    const field = fc.constantFrom('description', 'merchantId', 'terminalId', 'city', 'street')
    fc.assert(
      fc.property(field, avroStringLength, gluedPrefix, hostilePan, gluedSuffix, fc.boolean(), (name, length, before, { digits, text }, after, withSchema) => {
        const content = `${before}${text}${after}`
        const padded = content + 'x'.repeat(Math.max(0, length - Buffer.byteLength(content)))
        const value = confluentFrame(SCHEMA_ID, rawType.toBuffer(cardRecord({ [name]: padded })))
        const dlq = toDlq(value, withSchema)
        expect(readableDigits(dlq.value!.toString('utf8'))).not.toContain(digits)
        if (withSchema) {
          const back = rawType.fromBuffer(dlq.value!.subarray(5))
          for (const s of strings(back)) expect(readableDigits(s)).not.toContain(digits)
        }
      }),
      { numRuns: 1500 },
    )
  })

  it('never carries one in clear in a key or a header either (property)', () => {
    fc.assert(
      fc.property(gluedPrefix, hostilePan, gluedSuffix, (before, { digits, text }, after) => {
        const t = before + text + after
        const dlq = createDlqRecord(
          'dlq',
          { topic: 'raw', partition: 0, offset: '1', key: Buffer.from(t), value: null, headers: { note: t, refs: [Buffer.from(t)] } },
          { error: new Error(t), attempts: 1 },
        )
        expect(readableDigits(dlq.key!.toString())).not.toContain(digits)
        expect(readableDigits(String(dlq.headers.note))).not.toContain(digits)
        expect(readableDigits((dlq.headers.refs as Buffer[])[0]!.toString())).not.toContain(digits)
        expect(readableDigits(readDlqHeaders(dlq.headers).errorMessage!)).not.toContain(digits)
      }),
      { numRuns: 1000 },
    )
  })
})
