import type { SimClock } from '../core/sim-clock.ts'
import { compactIban } from '../core/bank-codes.ts'
import { HistoryGenerator } from './history-generator.ts'
import { Ledger } from './ledger.ts'
import type { MerchantSource } from './merchant-source.ts'
import type { BankUser, SimAccount, World } from './world.ts'

/** The bank's clients, accounts and their histories, with lookups. */
export class BankState {
  readonly world: World
  readonly clock: SimClock
  readonly generator: HistoryGenerator
  readonly ledger: Ledger
  readonly merchants: MerchantSource
  readonly #accountsById = new Map<string, SimAccount>()
  readonly #accountsByIban = new Map<string, SimAccount>()
  readonly #usersById = new Map<string, BankUser>()
  readonly #usersByName = new Map<string, BankUser>()

  constructor(world: World, merchants: MerchantSource, clock: SimClock) {
    this.world = world
    this.clock = clock
    this.merchants = merchants
    this.generator = new HistoryGenerator(world, merchants)
    this.ledger = new Ledger(world, this.generator)
    for (const a of world.accounts) {
      this.#accountsById.set(a.id, a)
      this.#accountsByIban.set(a.iban, a)
    }
    for (const u of world.users) {
      this.#usersById.set(u.id, u)
      this.#usersByName.set(u.username, u)
    }
  }

  account(id: string): SimAccount | undefined {
    return this.#accountsById.get(id)
  }

  accountByIban(iban: string): SimAccount | undefined {
    return this.#accountsByIban.get(compactIban(iban))
  }

  user(id: string): BankUser | undefined {
    return this.#usersById.get(id)
  }

  userByUsername(username: string): BankUser | undefined {
    return this.#usersByName.get(username)
  }

  accountsOf(userId: string): SimAccount[] {
    return this.world.accounts.filter((a) => a.userId === userId)
  }

  /** Checks a username/password pair of the consent and signing pages. */
  login(username: string, password: string): BankUser | undefined {
    const user = this.#usersByName.get(username)
    return user && user.password === password ? user : undefined
  }
}
