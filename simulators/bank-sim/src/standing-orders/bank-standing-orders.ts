import { addDays, bankInstant } from '../core/bank-dates.ts'
import { Rng, hashKey } from '../core/random.ts'
import { czechAccountNumber, czechBank, czechIban, parseCzechIban } from '../core/bank-codes.ts'
import type { World } from '../data/world.ts'
import type { Schedule } from './schedule.ts'
import type { StandingOrder, StandingOrderTerms } from './standing-order.ts'

/**
 * The standing orders clients set up at the bank long ago (rent, insurance,
 * pension saving; a saving order on EUR accounts), active since shortly after
 * the history starts. Deterministic from the seed; their executions are part of
 * the account histories.
 */
export function bankStandingOrders(world: World): StandingOrder[] {
  const out: StandingOrder[] = []
  for (const account of world.accounts) {
    if (account.kind !== 'CURRENT') continue
    const rng = Rng.of(world.seed, 'standing-orders', account.id)
    const plans: Array<{ name: string; bank: string; minor: number; day: number; interval: Schedule['interval']; message: string; vs?: string }> = []
    if (account.currency === 'CZK') {
      // Rent is a share of the salary, so that income covers the generated spending and balances stay positive.
      plans.push({ name: 'Bytove druzstvo Vinohrady', bank: rng.pick(['0100', '0800', '2010']), minor: Math.round((account.salaryMinor * rng.int(18, 28)) / 100 / 10_000) * 10_000, day: rng.int(1, 5), interval: 'MONTHLY', message: 'NAJEM', vs: rng.digits(6).replace(/^0/, '1') })
      plans.push({ name: 'Pojistovna Uniqa', bank: '5500', minor: rng.int(5, 30) * 100 * 100, day: 20, interval: 'MONTHLY', message: 'POJISTNE', vs: rng.digits(8).replace(/^0/, '1') })
      plans.push({ name: 'Penzijni sporeni', bank: '0300', minor: rng.int(5, 20) * 100 * 100 * 3, day: 15, interval: 'QUARTERLY', message: 'PENZIJNI SPORENI' })
    } else if (account.currency === 'EUR') {
      plans.push({ name: 'Sporici ucet EUR', bank: '5500', minor: rng.int(50, 200) * 100, day: 25, interval: 'MONTHLY', message: 'SPORENI' })
    }
    plans.forEach((plan, i) => {
      const number = czechAccountNumber(Rng.of(world.seed, 'so-creditor', account.id, i).digits(8))
      const iban = czechIban(plan.bank, '', number)
      const firstDate = addDays(world.historyStart, 10 + i).slice(0, 8) + String(plan.day).padStart(2, '0')
      const terms: StandingOrderTerms = {
        amountMinor: plan.minor,
        currency: account.currency,
        schedule: { firstDate, interval: plan.interval, mode: 'UNTIL_CANCELLATION' },
        creditor: { iban, czech: parseCzechIban(iban), country: 'CZ', bic: czechBank(plan.bank)?.bic },
        creditorName: plan.name,
        remittance: { message: plan.message, ...(plan.vs ? { vs: plan.vs } : {}) },
        echo: {
          amount: { instructedAmount: { value: plan.minor / 100, currency: account.currency } },
          creditorAccount: { identification: { iban } },
          creditor: { name: plan.name },
          remittanceInformation: { unstructured: plan.message, ...(plan.vs ? { structured: { creditorReferenceInformation: { reference: [`VS:${plan.vs}`] } } } : {}) },
        },
      }
      const id = `SO${hashKey(world.seed, 'so', account.id, i).toString(36).toUpperCase()}`
      out.push({ id, userId: account.userId, debtorAccountId: account.id, createdAt: bankInstant(firstDate, 0), segments: [{ from: bankInstant(firstDate, 0), terms }] })
    })
  }
  return out
}
