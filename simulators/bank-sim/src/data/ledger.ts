import { addDays, bankDate, bankInstant } from '../core/bank-dates.ts'
import type { HistoryGenerator } from './history-generator.ts'
import { amountAt, signedMinor, type LedgerEntry } from './ledger-entry.ts'
import type { SimAccount, World } from './world.ts'

export interface Balances {
  /** Booked balance now (CLBD). */
  bookedMinor: number
  /** Booked balance at the end of the previous bank day (PRCD). */
  previousDayMinor: number
  /** Sum of pending card holds. */
  holdsMinor: number
  /** booked - holds + credit line (CLAV). */
  availableMinor: number
}

/** Source of entries that are not part of the generated history (standing-order executions). */
export type EntryProvider = (account: SimAccount, now: number) => LedgerEntry[]

/**
 * An account's history as the bank shows it at a given instant: the generated
 * days up to that instant, standing-order executions, settled payments and
 * injected entries. Nothing is visible before its `at`; card holds are pending
 * until their `bookAt`, and a released hold disappears at its `releasedAt`.
 */
export class Ledger {
  readonly #world: World
  readonly #generator: HistoryGenerator
  readonly #extra = new Map<string, LedgerEntry[]>()
  readonly #providers: EntryProvider[] = []

  constructor(world: World, generator: HistoryGenerator) {
    this.#world = world
    this.#generator = generator
  }

  addProvider(provider: EntryProvider): void {
    this.#providers.push(provider)
  }

  /** Adds an entry (settled payment, injected transaction). */
  add(entry: LedgerEntry): void {
    const list = this.#extra.get(entry.accountId) ?? []
    list.push(entry)
    this.#extra.set(entry.accountId, list)
  }

  clearExtra(): void {
    this.#extra.clear()
  }

  /**
   * Every entry visible at `now` (pending and booked), in no particular order.
   * `fromDate` skips generated days that cannot reach it (holds book at most
   * three days after authorization), which keeps history pages cheap.
   */
  entries(account: SimAccount, now: number, fromDate?: string): LedgerEntry[] {
    const out: LedgerEntry[] = []
    const today = bankDate(now)
    const firstDay = fromDate !== undefined && addDays(fromDate, -4) > this.#world.historyStart ? addDays(fromDate, -4) : this.#world.historyStart
    const visible = (e: LedgerEntry): boolean => e.at <= now && (e.releasedAt === undefined || now < e.releasedAt)
    for (let d = firstDay; d <= today; d = addDays(d, 1)) {
      for (const e of this.#generator.day(account, d)) if (visible(e)) out.push(e)
    }
    for (const e of this.#extra.get(account.id) ?? []) if (visible(e)) out.push(e)
    for (const p of this.#providers) for (const e of p(account, now)) if (visible(e)) out.push(e)
    return out
  }

  balances(account: SimAccount, now: number): Balances {
    const startOfToday = bankInstant(bankDate(now), 0)
    let booked = account.openingBalanceMinor
    let previous = account.openingBalanceMinor
    let holds = 0
    for (const e of this.entries(account, now)) {
      if (e.bookAt <= now) {
        booked += signedMinor(e)
        if (e.bookAt < startOfToday) previous += signedMinor(e)
      } else if (e.direction === 'DBIT') {
        holds += amountAt(e, now)
      }
    }
    return { bookedMinor: booked, previousDayMinor: previous, holdsMinor: holds, availableMinor: booked - holds + account.creditLimitMinor }
  }
}
