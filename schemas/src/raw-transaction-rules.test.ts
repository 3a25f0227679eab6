import { describe, expect, it } from 'vitest'
import { exampleRawBankTransfer, exampleRawCardTransaction } from './example-events.ts'
import { isIso4217Code } from './iso-4217.ts'
import {
  CARD_MAX_LENGTHS,
  MAX_TIMESTAMP_MS,
  rawTransactionProblems,
  TRANSFER_MAX_LENGTHS,
} from './raw-transaction-rules.ts'

const card = exampleRawCardTransaction()
const transfer = exampleRawBankTransfer()

describe('rawTransactionProblems: size and value limits', () => {
  it('names the field and its length, never the value, for a field over its limit', () => {
    const long = 'Z'.repeat(20_000)
    const problems = rawTransactionProblems({ ...card, card: { ...card.card!, description: long } })
    expect(problems).toEqual(['card.description must be at most 99 characters, got 20000'])
    const transferProblems = rawTransactionProblems({
      ...transfer,
      transfer: { ...transfer.transfer!, message: long, counterpartyIban: long },
    })
    expect(transferProblems).toEqual([
      'transfer.counterpartyIban must be at most 42 characters, got 20000',
      'transfer.message must be at most 140 characters, got 20000',
    ])
    expect(rawTransactionProblems({ ...card, transactionId: long })[0]).toMatch(/^transactionId must be at most 256/)
  })

  it('accepts every field exactly at its limit', () => {
    const atLimit = <T extends object>(limits: Record<string, number>, base: T): T =>
      Object.fromEntries(Object.entries(base).map(([k, v]) => [k, typeof v === 'string' ? '1'.repeat(limits[k] ?? 0) : v])) as T
    const c = atLimit(CARD_MAX_LENGTHS, card.card!)
    expect(rawTransactionProblems({ ...card, card: { ...c, cardBin: '411111' } })).toEqual([])
    const t = atLimit(TRANSFER_MAX_LENGTHS, transfer.transfer!)
    expect(rawTransactionProblems({ ...transfer, transfer: t })).toEqual([])
  })

  it('bounds the digits of amounts: 15 integer digits, 4 fraction digits', () => {
    expect(rawTransactionProblems({ ...card, amount: `${'9'.repeat(15)}.9999` })).toEqual([])
    expect(rawTransactionProblems({ ...card, amount: '9'.repeat(400) })).toEqual([
      'amount must have at most 15 integer digits, got 400',
    ])
    expect(rawTransactionProblems({ ...card, amount: '1.23456' })).toEqual([
      'amount must have at most 4 fraction digits (ISO 4217 minor units), got 5',
    ])
  })

  it('accepts ISO 4217 codes only', () => {
    for (const code of ['CZK', 'EUR', 'GBP', 'USD', 'JPY', 'CLF']) expect(isIso4217Code(code), code).toBe(true)
    expect(rawTransactionProblems({ ...card, currency: 'ZZZ' })).toEqual([
      'currency "ZZZ" is not an ISO 4217 currency code',
    ])
  })

  it('keeps occurredAt and receivedAt in [1970, 2100)', () => {
    expect(rawTransactionProblems({ ...card, occurredAt: MAX_TIMESTAMP_MS - 1 })).toEqual([])
    expect(rawTransactionProblems({ ...card, occurredAt: 8.64e15 + 1 })).toEqual([
      'occurredAt must be epoch milliseconds in [1970-01-01, 2100-01-01) UTC, got 8640000000000001',
    ])
    expect(rawTransactionProblems({ ...card, receivedAt: -5 })).toHaveLength(1)
    expect(rawTransactionProblems({ ...card, occurredAt: MAX_TIMESTAMP_MS })).toHaveLength(1)
  })
})
