import { randomBytes } from 'node:crypto'
import { toMinor, isValidAmount } from '../core/money.ts'
import { BankSimConfigError } from '../errors.ts'
import { TX_CODES, type LedgerEntry, type Counterparty, type Remittance } from '../data/ledger-entry.ts'
import type { CardShop } from '../data/merchant-source.ts'
import type { BankState } from '../data/bank-state.ts'

/**
 * `POST /__admin/transactions` input: one transaction (copied `copies` times with
 * distinct entry references, for "identical twins"). A card payment with
 * `pendingUntil` is PDNG until then and BOOK afterwards, with the same entryReference.
 */
export interface InjectedTransaction {
  type?: 'CARD' | 'TRANSFER'
  amount: number
  creditDebitIndicator?: 'CRDT' | 'DBIT'
  at?: string
  pendingUntil?: string
  /** A card hold that never books: PDNG until then, afterwards gone from the history and the balance. */
  releaseAt?: string
  shopIndex?: number
  shop?: Partial<CardShop>
  counterparty?: Counterparty
  remittance?: Remittance
  entryReference?: string
  copies?: number
}

function instant(text: unknown, name: string, fallback: number): number {
  if (text === undefined) return fallback
  const t = typeof text === 'string' ? Date.parse(text) : NaN
  if (Number.isNaN(t)) throw new BankSimConfigError(`${name} must be an ISO date-time, got ${JSON.stringify(text)}`)
  return t
}

export function injectTransactions(bank: BankState, accountRef: { accountId?: unknown; iban?: unknown }, list: unknown): LedgerEntry[] {
  const account = typeof accountRef.accountId === 'string' ? bank.account(accountRef.accountId) : typeof accountRef.iban === 'string' ? bank.accountByIban(accountRef.iban) : undefined
  if (!account) throw new BankSimConfigError('accountId or iban must name an account of the simulator (see GET /__admin/clients)')
  if (!Array.isArray(list) || list.length === 0) throw new BankSimConfigError('transactions must be a non-empty array')
  const now = bank.clock.now()
  const out: LedgerEntry[] = []
  for (const [i, raw] of list.entries()) {
    const t = raw as InjectedTransaction
    if (!isValidAmount(t.amount)) throw new BankSimConfigError(`transactions[${i}].amount must be positive with at most 2 decimals`)
    const type = t.type ?? 'CARD'
    if (type !== 'CARD' && type !== 'TRANSFER') throw new BankSimConfigError(`transactions[${i}].type must be CARD or TRANSFER`)
    const direction = t.creditDebitIndicator ?? 'DBIT'
    if (direction !== 'CRDT' && direction !== 'DBIT') throw new BankSimConfigError(`transactions[${i}].creditDebitIndicator must be CRDT or DBIT`)
    const at = instant(t.at, `transactions[${i}].at`, now)
    if (t.releaseAt !== undefined && (t.pendingUntil !== undefined || type !== 'CARD' || direction !== 'DBIT')) {
      throw new BankSimConfigError(`transactions[${i}].releaseAt is for card holds (type CARD, DBIT) and excludes pendingUntil`)
    }
    const releasedAt = t.releaseAt === undefined ? undefined : instant(t.releaseAt, `transactions[${i}].releaseAt`, at)
    if (releasedAt !== undefined && releasedAt <= at) throw new BankSimConfigError(`transactions[${i}].releaseAt must be after at`)
    const bookAt = releasedAt !== undefined ? Number.MAX_SAFE_INTEGER : instant(t.pendingUntil, `transactions[${i}].pendingUntil`, at)
    if (bookAt < at) throw new BankSimConfigError(`transactions[${i}].pendingUntil is before at`)
    const copies = t.copies ?? 1
    if (!Number.isInteger(copies) || copies < 1 || copies > 100) throw new BankSimConfigError(`transactions[${i}].copies must be 1 to 100`)
    if (t.entryReference !== undefined && copies > 1) throw new BankSimConfigError(`transactions[${i}]: entryReference cannot be combined with copies`)
    let shop: CardShop | undefined
    if (type === 'CARD') {
      const base = bank.merchants.shop(t.shopIndex ?? 0)
      shop = { ...base, ...(t.shop ?? {}) }
    }
    for (let c = 0; c < copies; c++) {
      const entry: LedgerEntry = {
        entryReference: t.entryReference ?? `INJ${randomBytes(6).toString('hex').toUpperCase()}`,
        accountId: account.id,
        at,
        bookAt,
        amountMinor: toMinor(t.amount),
        ...(releasedAt !== undefined ? { releasedAt } : {}),
        currency: account.currency,
        direction,
        code: type === 'CARD' ? TX_CODES.cardPayment : TX_CODES.transfer,
        ...(shop ? { card: { shop, maskedPan: account.maskedPan, scheme: account.cardScheme } } : {}),
        ...(t.counterparty ? { counterparty: t.counterparty } : {}),
        ...(t.remittance ? { remittance: t.remittance } : {}),
      }
      bank.ledger.add(entry)
      out.push(entry)
    }
  }
  return out
}
