import { describe, expect, it } from 'vitest'
import { SimClock } from '../core/sim-clock.ts'
import { builtInMerchantSource } from './merchant-source.ts'
import { simDataMerchantSource } from './sim-data-merchants.ts'
import { StandingOrderService } from '../standing-orders/standing-order-service.ts'
import { addDays, bankDate, bankInstant, DAY_MS } from '../core/bank-dates.ts'
import { BankState } from './bank-state.ts'
import { buildWorld } from './world.ts'
import { amountAt, signedMinor } from './ledger-entry.ts'

const START = Date.parse('2026-03-10T12:00:00Z')

function bankAt(wall: { now: number }, seed = 'ledger') {
  const clock = new SimClock({ wallClock: () => wall.now })
  const world = buildWorld({ seed, clients: 2, today: bankDate(clock.now()), historyDays: 60 })
  return new BankState(world, builtInMerchantSource(seed), clock)
}

describe('generated history and balances', () => {
  it('is a pure function of the seed: two banks built alike hold the same entries', () => {
    const wall = { now: START }
    const a = bankAt(wall)
    const b = bankAt(wall)
    const account = a.world.accounts[0]!
    expect(a.ledger.entries(account, wall.now)).toEqual(b.ledger.entries(b.account(account.id)!, wall.now))
    expect(bankAt(wall, 'other').world.accounts[0]!.iban).not.toBe(account.iban)
  })

  it('shows nothing before it happens and books card holds one to three days after the authorization', () => {
    const wall = { now: START }
    const bank = bankAt(wall)
    const account = bank.world.accounts.find((x) => x.kind === 'CURRENT' && x.currency === 'CZK')!
    const visible = bank.ledger.entries(account, wall.now)
    expect(visible.length).toBeGreaterThan(30)
    expect(visible.every((e) => e.at <= wall.now)).toBe(true)
    const cards = visible.filter((e) => e.card)
    expect(cards.length).toBeGreaterThan(10)
    for (const e of cards) {
      expect(e.bookAt - e.at).toBeGreaterThan(0)
      expect(e.bookAt - e.at).toBeLessThanOrEqual(4 * DAY_MS)
    }
    const later = bank.ledger.entries(account, wall.now + 5 * DAY_MS)
    expect(later.length).toBeGreaterThan(visible.length)
    const refs = new Set(later.map((e) => e.entryReference))
    expect(refs.size).toBe(later.length)
    for (const e of visible) expect(refs.has(e.entryReference)).toBe(true)
  })

  it('computes booked, previous-day and available balances from the entries', () => {
    const wall = { now: START }
    const bank = bankAt(wall)
    const card = bank.world.accounts.find((x) => x.kind === 'CREDIT_CARD')!
    const entries = bank.ledger.entries(card, wall.now)
    const booked = entries.filter((e) => e.bookAt <= wall.now).reduce((sum, e) => sum + signedMinor(e), card.openingBalanceMinor)
    const holds = entries.filter((e) => e.bookAt > wall.now && e.direction === 'DBIT').reduce((sum, e) => sum + amountAt(e, wall.now), 0)
    const balances = bank.ledger.balances(card, wall.now)
    expect(balances.bookedMinor).toBe(booked)
    expect(balances.holdsMinor).toBe(holds)
    expect(balances.availableMinor).toBe(booked - holds + card.creditLimitMinor)
    expect(holds).toBeGreaterThan(0)
  })

  it('holds a foreign-currency card payment at a slightly different amount than it books', () => {
    const wall = { now: START }
    const bank = bankAt(wall)
    const fx = bank.world.accounts.flatMap((a) => bank.ledger.entries(a, wall.now)).filter((e) => e.card?.original !== undefined)
    expect(fx.length).toBeGreaterThan(0)
    const differing = fx.filter((e) => e.holdAmountMinor !== undefined)
    expect(differing.length).toBeGreaterThan(0)
    for (const e of differing) {
      expect(e.holdAmountMinor).not.toBe(e.amountMinor)
      expect(Math.abs((e.holdAmountMinor as number) - e.amountMinor)).toBeLessThanOrEqual(Math.ceil(e.amountMinor * 0.008) + 1)
      expect(amountAt(e, e.bookAt - 1)).toBe(e.holdAmountMinor)
      expect(amountAt(e, e.bookAt)).toBe(e.amountMinor)
    }
  })

  // Other packages' tests pick generated accounts and expect money on them.
  it('keeps every generated current account in credit over the two years', () => {
    const merchants = simDataMerchantSource({})
    for (const seed of ['bank-sim', 'x']) {
      const clock = new SimClock({ wallClock: () => START })
      const world = buildWorld({ seed, clients: 5, today: bankDate(START), historyDays: 730 })
      const bank = new BankState(world, merchants, clock)
      new StandingOrderService(bank)
      for (const account of world.accounts.filter((a) => a.kind === 'CURRENT')) {
        for (let d = addDays(world.historyStart, 1); d <= bankDate(START); d = addDays(d, 29)) {
          expect({ account: account.id, d, negative: bank.ledger.balances(account, bankInstant(d, 720)).availableMinor < 0 }).toEqual({ account: account.id, d, negative: false })
        }
      }
    }
  })
})
