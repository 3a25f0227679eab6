import { Rng, hashKey } from '../core/random.ts'
import { bankInstant, addDays, monthOf, DAY_MS } from '../core/bank-dates.ts'
import { CZK_PER_UNIT } from '../core/money.ts'
import { czechAccountNumber, czechIban, czechBank } from '../core/bank-codes.ts'
import type { MerchantSource, CardShop } from './merchant-source.ts'
import type { SimAccount, World } from './world.ts'
import { TX_CODES, type LedgerEntry } from './ledger-entry.ts'

/** Amount ranges (in CZK) of card payments by MCC. */
const MCC_RANGES: Record<string, [number, number]> = {
  '5411': [80, 2500],
  '5912': [50, 900],
  '5541': [500, 2500],
  '5814': [50, 250],
  '5812': [150, 1500],
  '5732': [300, 25_000],
  '5712': [200, 8000],
  '4112': [50, 600],
}

/** Share of card payments the merchant refunds in full a little later (returned goods). */
const REFUND_SHARE = 0.01

const FRIENDS = ['Martina Kralova', 'Ondrej Benes', 'Lenka Fialova', 'Vojtech Pokorny', 'Barbora Ruzickova']

const LOCAL_CURRENCY: Record<string, string> = { CZ: 'CZK', GB: 'GBP', PL: 'PLN', HU: 'HUF', US: 'USD' }

function shopCurrency(shop: CardShop): string {
  return LOCAL_CURRENCY[shop.country] ?? 'EUR'
}

/**
 * Generates the history of one account one day at a time. A day's entries are a
 * pure function of (seed, account, date), so days can be produced lazily and in
 * any order, and the same seed gives the same history in every run. The clock
 * decides what is visible, not the generator.
 */
export class HistoryGenerator {
  readonly #world: World
  readonly #merchants: MerchantSource
  readonly #days = new Map<string, LedgerEntry[]>()
  readonly #cardMonthTotals = new Map<string, number>()

  constructor(world: World, merchants: MerchantSource) {
    this.#world = world
    this.#merchants = merchants
  }

  /** Entries that happen on `date` (bank local date), in time order. */
  day(account: SimAccount, date: string): LedgerEntry[] {
    if (date < this.#world.historyStart) return []
    const key = `${account.id}|${date}`
    let entries = this.#days.get(key)
    if (!entries) {
      entries = this.#generate(account, date)
      this.#days.set(key, entries)
    }
    return entries
  }

  #generate(account: SimAccount, date: string): LedgerEntry[] {
    const seed = this.#world.seed
    const rng = Rng.of(seed, 'day', account.id, date)
    const out: LedgerEntry[] = []
    const dayOfMonth = Number(date.slice(8, 10))
    const weekday = new Date(`${date}T12:00:00Z`).getUTCDay()
    const weekend = weekday === 0 || weekday === 6
    const add = (partial: Omit<LedgerEntry, 'entryReference' | 'accountId' | 'currency'> & { currency?: string }): void => {
      const index = out.length
      const ref = `${date.replaceAll('-', '')}${hashKey(seed, 'ref', account.id, date, index).toString(16).padStart(8, '0')}`
      out.push({ entryReference: ref, accountId: account.id, currency: account.currency, ...partial })
    }

    if (account.kind === 'CURRENT' && account.currency === 'CZK') {
      if (dayOfMonth === 10) {
        const at = bankInstant(date, 6 * 60 + rng.int(0, 59))
        const amount = account.salaryMinor + rng.int(-20, 20) * 100 * 100
        add({ at, bookAt: at, amountMinor: amount, direction: 'CRDT', code: TX_CODES.transfer, counterparty: account.employer, remittance: { message: 'MZDA', vs: date.slice(0, 7).replace('-', '') } })
      }
      if (dayOfMonth === 5) {
        const card = this.#world.accounts.find((a) => a.userId === account.userId && a.kind === 'CREDIT_CARD')
        if (card) {
          const due = this.cardMonthTotal(card, monthOf(addDays(date, -10)))
          if (due > 0) {
            const at = bankInstant(date, 5 * 60 + 30)
            add({ at, bookAt: at, amountMinor: due, direction: 'DBIT', code: TX_CODES.transfer, counterparty: { name: 'Splatka kreditni karty', iban: card.iban, number: card.number, bankCode: '5500', bic: 'RZBCCZPP' }, remittance: { message: 'SPLATKA KARTY', vs: card.number } })
          }
        }
      }
      this.#cardPayments(account, date, rng, weekend ? [0.2, 0.3, 0.3, 0.2] : [0.35, 0.35, 0.2, 0.1], add)
      if (rng.chance(0.05)) {
        const payee = this.#merchants.payee(Math.floor(rng.next() * this.#merchants.payeeCount()))
        const at = bankInstant(date, rng.int(8 * 60, 20 * 60))
        add({
          at,
          bookAt: at,
          amountMinor: rng.int(300, 5000) * 100,
          direction: 'DBIT',
          code: TX_CODES.transfer,
          counterparty: { name: payee.name, iban: payee.iban, number: payee.number, prefix: payee.prefix, bankCode: payee.bankCode, bic: payee.bic },
          remittance: { vs: rng.digits(10).replace(/^0+/, '1'), ks: '0308', message: 'FAKTURA' },
        })
      }
      if (rng.chance(0.04)) {
        const bank = rng.pick(['0100', '0300', '0800', '3030', '6210'])
        const number = czechAccountNumber(rng.digits(8))
        const at = bankInstant(date, rng.int(7 * 60, 22 * 60))
        add({
          at,
          bookAt: at,
          amountMinor: rng.int(100, 3000) * 100,
          direction: 'CRDT',
          code: rng.chance(0.5) ? TX_CODES.instantTransfer : TX_CODES.transfer,
          counterparty: { name: rng.pick(FRIENDS), number, bankCode: bank, iban: czechIban(bank, '', number), bic: czechBank(bank)?.bic },
          remittance: { message: rng.pick(['za obed', 'vstupenky', 'darek', 'najem chata']) },
        })
      }
    } else if (account.kind === 'CURRENT') {
      if (dayOfMonth === (account.currency === 'EUR' ? 15 : 25)) {
        const at = bankInstant(date, 9 * 60)
        add({
          at,
          bookAt: at,
          amountMinor: rng.int(500, 2000) * 100,
          direction: 'CRDT',
          code: TX_CODES.transfer,
          counterparty: { name: account.currency === 'EUR' ? 'Freelance Client GmbH' : 'US Royalties Inc', iban: account.currency === 'EUR' ? 'DE89370400440532013000' : undefined, bic: account.currency === 'EUR' ? 'COBADEFFXXX' : 'CHASUS33' },
          remittance: { message: `INVOICE ${date.slice(0, 7)}` },
        })
      }
      this.#cardPayments(account, date, rng, [0.9, 0.1], add, true)
    } else {
      if (dayOfMonth === 5) {
        const due = this.cardMonthTotal(account, monthOf(addDays(date, -10)))
        if (due > 0) {
          const at = bankInstant(date, 5 * 60 + 30)
          add({ at, bookAt: at, amountMinor: due, direction: 'CRDT', code: TX_CODES.transfer, counterparty: { name: 'Splatka kreditni karty' }, remittance: { message: 'SPLATKA KARTY' } })
        }
      }
      this.#cardPayments(account, date, rng, weekend ? [0.4, 0.4, 0.2] : [0.6, 0.3, 0.1], add)
    }
    // Refunds come last and from their own random stream, so adding them left every
    // other entry (and its entryReference) of the day as it was.
    const refundRng = Rng.of(seed, 'refunds', account.id, date)
    for (const payment of out.filter((e) => e.code === TX_CODES.cardPayment && e.direction === 'DBIT')) {
      if (!refundRng.chance(REFUND_SHARE)) continue
      // Within the 4-day lookback of history reads, so a page starting at dateFrom still sees it.
      const at = payment.bookAt + refundRng.int(1, 2 * 60) * 60_000
      add({ at, bookAt: at + DAY_MS, amountMinor: payment.amountMinor, direction: 'CRDT', code: TX_CODES.cardPayment, ...(payment.card ? { card: payment.card } : {}) })
    }
    return out.sort((a, b) => a.at - b.at)
  }

  /**
   * Card payments: a pending hold at the authorization time, booked one to three
   * days later at 04:00. `abroad` prefers foreign shops (foreign-currency accounts).
   */
  #cardPayments(account: SimAccount, date: string, rng: Rng, countWeights: number[], add: (e: Omit<LedgerEntry, 'entryReference' | 'accountId' | 'currency'>) => void, abroad = false): void {
    let r = rng.next()
    let count = 0
    for (; count < countWeights.length - 1; count++) {
      r -= countWeights[count] as number
      if (r < 0) break
    }
    const favourites = this.#favouriteShops(account.userId)
    for (let i = 0; i < count; i++) {
      let shop = rng.chance(0.85) ? rng.pick(favourites) : this.#merchants.shop(Math.floor(rng.next() * this.#merchants.shopCount()))
      if (abroad) {
        for (let tries = 0; tries < 10 && shop.country === 'CZ'; tries++) shop = this.#merchants.shop(Math.floor(rng.next() * this.#merchants.shopCount()))
      }
      const [lo, hi] = MCC_RANGES[shop.mcc] ?? [100, 1000]
      const czk = rng.chance(0.97) ? rng.int(lo, Math.min(hi, lo * 6)) : rng.int(lo, hi)
      const currency = shopCurrency(shop)
      const originalMinor = Math.round((czk / (CZK_PER_UNIT[currency] ?? 1)) * 100) + rng.int(0, 99) - 50
      const at = bankInstant(date, rng.int(7 * 60, 21 * 60 + 59)) + rng.int(0, 59) * 1000
      const bookAt = bankInstant(addDays(date, rng.int(1, 3)), 4 * 60)
      let amountMinor = Math.max(100, originalMinor)
      let holdAmountMinor: number | undefined
      let original: { amountMinor: number; currency: string; rate: number } | undefined
      if (currency !== account.currency) {
        const rate = Math.round(((CZK_PER_UNIT[currency] ?? 1) / (CZK_PER_UNIT[account.currency] ?? 1)) * 1.02 * 10_000) / 10_000
        original = { amountMinor: Math.max(100, originalMinor), currency, rate }
        amountMinor = Math.max(1, Math.round(original.amountMinor * rate))
        // The hold used the rate of the authorization day, a little off the booking rate.
        holdAmountMinor = Math.max(1, Math.round(amountMinor * (1 + rng.int(-8, 8) / 1000)))
      }
      add({
        at,
        bookAt: Math.max(bookAt, at + DAY_MS / 4),
        amountMinor,
        ...(holdAmountMinor !== undefined && holdAmountMinor !== amountMinor ? { holdAmountMinor } : {}),
        direction: 'DBIT',
        code: TX_CODES.cardPayment,
        card: { shop, maskedPan: account.maskedPan, scheme: account.cardScheme, ...(original ? { original } : {}) },
      })
    }
  }

  #favourites = new Map<string, CardShop[]>()

  #favouriteShops(userId: string): CardShop[] {
    let list = this.#favourites.get(userId)
    if (!list) {
      const rng = Rng.of(this.#world.seed, 'favourites', userId)
      list = []
      const n = this.#merchants.shopCount()
      // Mostly shops at home: a Czech client shops in Czechia, abroad only now and then.
      for (let i = 0; i < Math.min(20, n); i++) {
        let shop = this.#merchants.shop(Math.floor(rng.next() * n))
        for (let tries = 0; tries < 20 && shop.country !== 'CZ'; tries++) shop = this.#merchants.shop(Math.floor(rng.next() * n))
        list.push(shop)
      }
      this.#favourites.set(userId, list)
    }
    return list
  }

  /** Sum of the card payments of a credit-card account authorized in `month` (YYYY-MM): next month's repayment. */
  cardMonthTotal(account: SimAccount, month: string): number {
    const key = `${account.id}|${month}`
    const cached = this.#cardMonthTotals.get(key)
    if (cached !== undefined) return cached
    let total = 0
    for (let d = `${month}-01`; monthOf(d) === month; d = addDays(d, 1)) {
      for (const e of this.day(account, d)) if (e.code === TX_CODES.cardPayment) total += e.direction === 'DBIT' ? e.amountMinor : -e.amountMinor
    }
    this.#cardMonthTotals.set(key, total)
    return total
  }
}
