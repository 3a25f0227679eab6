import { Rng, hashKey } from '../core/random.ts'
import { czechAccountNumber, czechIban, OWN_BANK_CODE, czechBank } from '../core/bank-codes.ts'
import { addDays } from '../core/bank-dates.ts'
import type { Currency } from '../core/money.ts'
import type { Counterparty } from './ledger-entry.ts'

export interface BankUser {
  id: string
  index: number
  username: string
  /** Test credential for the consent and signing pages; never logged. */
  password: string
  fullName: string
}

export type AccountKind = 'CURRENT' | 'CREDIT_CARD'

export interface SimAccount {
  id: string
  userId: string
  kind: AccountKind
  currency: Currency
  prefix: string
  number: string
  iban: string
  name: string
  product: string
  openingBalanceMinor: number
  /** Credit line (credit-card accounts only; 0 for current accounts). */
  creditLimitMinor: number
  maskedPan: string
  cardScheme: 'VISA' | 'MASTERCARD'
  /** Monthly salary on current CZK accounts, 0 elsewhere. */
  salaryMinor: number
  employer: Counterparty
}

export interface World {
  seed: string
  historyStart: string
  users: BankUser[]
  accounts: SimAccount[]
}

const FIRST = ['Jan', 'Petr', 'Jana', 'Eva', 'Tomas', 'Lucie', 'Martin', 'Katerina', 'Pavel', 'Tereza', 'Jakub', 'Veronika']
const LAST_M = ['Novak', 'Svoboda', 'Dvorak', 'Cerny', 'Prochazka', 'Kucera', 'Vesely', 'Horak']
const FEMALE = new Set(['Jana', 'Eva', 'Lucie', 'Katerina', 'Tereza', 'Veronika'])
const EMPLOYERS = ['Skoda Auto a.s.', 'CEZ a.s.', 'Avast Software s.r.o.', 'Moneta Money Bank a.s.', 'Kofola CeskoSlovensko a.s.', 'Fakultni nemocnice Brno']

function surname(last: string, female: boolean): string {
  if (!female) return last
  if (last.endsWith('a')) return `${last.slice(0, -1)}ova`
  return `${last}ova`
}

/**
 * Builds the bank's clients and accounts from the seed. Client `i` (1-based) logs
 * in as `user<i>` with password `password<i>`. Every client has a CZK current
 * account; user1 also has EUR and USD current accounts and a CZK credit-card
 * account so that tests find every kind on the first client; the others get them
 * by chance.
 */
export function buildWorld(options: { seed: string; clients: number; today: string; historyDays: number }): World {
  const { seed, clients } = options
  const users: BankUser[] = []
  const accounts: SimAccount[] = []
  for (let i = 0; i < clients; i++) {
    const rng = Rng.of(seed, 'user', i)
    const first = rng.pick(FIRST)
    const female = FEMALE.has(first)
    const fullName = `${first} ${surname(rng.pick(LAST_M), female)}`
    const user: BankUser = { id: `u${i + 1}`, index: i, username: `user${i + 1}`, password: `password${i + 1}`, fullName }
    users.push(user)
    const kinds: Array<[AccountKind, Currency]> = [['CURRENT', 'CZK']]
    if (i === 0 || rng.chance(0.5)) kinds.push(['CURRENT', 'EUR'])
    if (i === 0 || rng.chance(0.3)) kinds.push(['CURRENT', 'USD'])
    if (i === 0 || rng.chance(0.6)) kinds.push(['CREDIT_CARD', 'CZK'])
    const employerBank = rng.pick(['0100', '0300', '0800', '2010'])
    const employer: Counterparty = {
      name: rng.pick(EMPLOYERS),
      bankCode: employerBank,
      number: czechAccountNumber(rng.digits(8)),
      bic: czechBank(employerBank)?.bic,
    }
    employer.iban = czechIban(employerBank, '', employer.number as string)
    kinds.forEach(([kind, currency], k) => accounts.push(makeAccount(seed, user, kind, currency, k, employer)))
  }
  return { seed, historyStart: addDays(options.today, -options.historyDays), users, accounts }
}

function makeAccount(seed: string, user: BankUser, kind: AccountKind, currency: Currency, ordinal: number, employer: Counterparty): SimAccount {
  const rng = Rng.of(seed, 'account', user.id, ordinal)
  const number = czechAccountNumber(rng.digits(8))
  const prefix = ''
  const iban = czechIban(OWN_BANK_CODE, prefix, number)
  const id = (hashKey(seed, 'account-id', user.id, ordinal).toString(36) + hashKey(seed, iban).toString(36)).toUpperCase()
  const scale = currency === 'CZK' ? 1 : 1 / 25
  const names: Record<AccountKind, string> = { CURRENT: currency === 'CZK' ? 'Bezny ucet' : `Devizovy ucet ${currency}`, CREDIT_CARD: 'Kreditni karta' }
  const products: Record<AccountKind, string> = { CURRENT: currency === 'CZK' ? 'eKonto' : 'eKonto devizove', CREDIT_CARD: 'Kreditni karta Style' }
  return {
    id,
    userId: user.id,
    kind,
    currency,
    prefix,
    number,
    iban,
    name: `${names[kind]} ${user.fullName}`,
    product: products[kind],
    openingBalanceMinor: kind === 'CREDIT_CARD' ? 0 : Math.round(rng.int(30_000, 120_000) * scale) * 100,
    creditLimitMinor: kind === 'CREDIT_CARD' ? rng.int(3, 15) * 10_000 * 100 : 0,
    maskedPan: `xxxxxxxxxxxx${rng.digits(4)}`,
    cardScheme: rng.chance(0.5) ? 'VISA' : 'MASTERCARD',
    salaryMinor: kind === 'CURRENT' && currency === 'CZK' ? rng.int(45, 85) * 1000 * 100 : 0,
    employer,
  }
}
