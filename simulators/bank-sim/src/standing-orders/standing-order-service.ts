import { randomBytes } from 'node:crypto'
import { addDays, bankDate, bankInstant } from '../core/bank-dates.ts'
import { hashKey } from '../core/random.ts'
import { BankApiError } from '../errors.ts'
import type { BankState } from '../data/bank-state.ts'
import { TX_CODES, type LedgerEntry } from '../data/ledger-entry.ts'
import type { SimAccount } from '../data/world.ts'
import type { Consent } from '../oauth/token-service.ts'
import { readOrder } from '../payments/order-input.ts'
import { bankStandingOrders } from './bank-standing-orders.ts'
import { executionDates, nextExecutionDate, type Schedule } from './schedule.ts'
import type { Segment, StandingOrder, StandingOrderStatus, StandingOrderTerms } from './standing-order.ts'
import { readSchedule } from './standing-order-validation.ts'

/**
 * Execution time of the day (ASSUMPTION: standing orders run at the start of the
 * bank day, or at the authorization when that comes later on the first day).
 */
const EXECUTION_MINUTE = 0

/**
 * Standing orders: the bank's own (generated with the world, already active) and
 * those created through the payments interface, with their signing rounds:
 * create → ACTC until authorized → ACSP; PUT and DELETE record a pending change
 * that takes effect only when its own signing round is authorized. Executions are
 * derived from the schedule and show up in the account history.
 */
export class StandingOrderService {
  readonly #bank: BankState
  readonly #orders = new Map<string, StandingOrder>()

  constructor(bank: BankState) {
    this.#bank = bank
    this.#loadBankOrders()
    bank.ledger.addProvider((account, now) => this.executionsFor(account, now))
  }

  reset(): void {
    this.#orders.clear()
    this.#loadBankOrders()
  }

  #loadBankOrders(): void {
    for (const order of bankStandingOrders(this.#bank.world)) this.#orders.set(order.id, order)
  }

  #readTerms(consent: Consent, body: unknown): { terms: StandingOrderTerms; debtor: SimAccount } {
    const order = readOrder(this.#bank, consent, body, 'standingOrderIdentification.instructionIdentification')
    const { schedule, errors } = readSchedule(body)
    if (errors.length > 0 || !schedule) throw new BankApiError(400, errors)
    const today = bankDate(this.#bank.clock.now())
    if (order.currency !== 'CZK') {
      throw new BankApiError(400, { error: 'AM11', scope: 'amount.instructedAmount.currency', parameters: { CURRENCY_ALLOWED: 'CZK' }, message: 'standing orders are domestic CZK transfers only' })
    }
    if (!order.creditor.czech) {
      throw new BankApiError(400, { error: 'FIELD_INVALID', scope: 'creditorAccount', message: 'standing orders go to Czech accounts only (CZ IBAN or national number with bank code)' })
    }
    if (schedule.firstDate < today) throw new BankApiError(400, { error: 'DT01', scope: 'requestedExecutionDate', message: `the first execution ${schedule.firstDate} is in the past (today is ${today})` })
    const standingOrder = {
      execution: { interval: schedule.interval, mode: schedule.mode, modeDue: 'DUE_DAY_OF_MONTH' },
      ...(schedule.lastExecutionDate ? { validity: { lastExecutionDate: schedule.lastExecutionDate } } : {}),
    }
    return {
      debtor: order.debtor,
      terms: {
        instructionId: order.instructionId,
        amountMinor: order.amountMinor,
        currency: order.currency,
        schedule,
        creditor: order.creditor,
        ...(order.creditorName !== undefined ? { creditorName: order.creditorName } : {}),
        ...(order.remittance ? { remittance: order.remittance } : {}),
        echo: { ...order.echo, requestedExecutionDate: schedule.firstDate, standingOrder },
      },
    }
  }

  create(consent: Consent, body: unknown): StandingOrder {
    const { terms, debtor } = this.#readTerms(consent, body)
    const now = this.#bank.clock.now()
    const order: StandingOrder = {
      id: `SO${now.toString(36).toUpperCase()}${randomBytes(4).toString('hex').toUpperCase()}`,
      userId: consent.userId,
      debtorAccountId: debtor.id,
      clientId: consent.clientId,
      createdAt: now,
      draft: terms,
      segments: [],
      signing: { signId: randomBytes(8).toString('hex'), state: 'OPEN', kind: 'CREATE' },
    }
    this.#orders.set(order.id, order)
    return order
  }

  update(consent: Consent, id: string, body: unknown): StandingOrder {
    const order = this.#ownedBy(consent, id)
    this.#assertChangeable(order)
    const { terms, debtor } = this.#readTerms(consent, body)
    if (debtor.id !== order.debtorAccountId) throw new BankApiError(400, { error: 'FIELD_INVALID', scope: 'debtorAccount', message: 'the debtor account of a standing order cannot change' })
    if (order.draft) {
      order.draft = terms
      return order
    }
    order.signing = { signId: randomBytes(8).toString('hex'), state: 'OPEN', kind: 'UPDATE', pendingTerms: terms }
    return order
  }

  delete(consent: Consent, id: string): StandingOrder {
    const order = this.#ownedBy(consent, id)
    this.#assertChangeable(order)
    if (order.draft) {
      // Never authorized: nothing ever ran, so it goes at once without a signing round.
      order.deletedAt = this.#bank.clock.now()
      delete order.signing
      return order
    }
    order.signing = { signId: randomBytes(8).toString('hex'), state: 'OPEN', kind: 'DELETE' }
    return order
  }

  #assertChangeable(order: StandingOrder): void {
    const status = this.status(order)
    if (status !== 'ACTC' && status !== 'ACSP') {
      throw new BankApiError(400, { error: 'FIELD_INVALID', scope: 'standingOrderId', parameters: { STATUS: status }, message: `standing order ${order.id} is ${status} and cannot change` })
    }
  }

  /** The user authorized the open signing round. */
  authorize(order: StandingOrder): void {
    const s = order.signing
    if (!s || s.state !== 'OPEN') return
    const now = this.#bank.clock.now()
    s.state = 'DONE'
    if (s.kind === 'CREATE' && order.draft) {
      order.segments.push({ from: now, terms: order.draft })
      delete order.draft
    } else if (s.kind === 'UPDATE' && s.pendingTerms) {
      order.segments.push({ from: now, terms: s.pendingTerms })
      delete s.pendingTerms
    } else if (s.kind === 'DELETE') {
      order.deletedAt = now
    }
  }

  cancel(order: StandingOrder): void {
    const s = order.signing
    if (!s || s.state !== 'OPEN') return
    s.state = 'CANCELED'
    delete s.pendingTerms
    if (s.kind === 'CREATE') order.rejected = true
  }

  status(order: StandingOrder): StandingOrderStatus {
    if (order.deletedAt !== undefined && order.deletedAt <= this.#bank.clock.now()) return 'CANC'
    if (order.rejected) return 'RJCT'
    if (order.segments.length === 0) return 'ACTC'
    const seg = order.segments[order.segments.length - 1] as Segment
    const { schedule } = seg.terms
    if (schedule.mode === 'UNTIL_DATE' && schedule.lastExecutionDate !== undefined) {
      const final = executionDates(schedule, schedule.firstDate, schedule.lastExecutionDate).at(-1)
      if (final === undefined || Math.max(bankInstant(final, EXECUTION_MINUTE), seg.from) <= this.#bank.clock.now()) return 'ACSC'
    }
    return 'ACSP'
  }

  /** The next execution after now, if any. */
  #next(schedule: Schedule): string | undefined {
    const now = this.#bank.clock.now()
    const today = bankDate(now)
    const next = nextExecutionDate(schedule, today)
    if (next === today && bankInstant(today, EXECUTION_MINUTE) <= now) return nextExecutionDate(schedule, addDays(today, 1))
    return next
  }

  #current(order: StandingOrder): StandingOrderTerms | undefined {
    return order.segments[order.segments.length - 1]?.terms ?? order.draft
  }

  /** Executions up to now: date, entry reference and the ledger entry. */
  executions(order: StandingOrder, now: number): LedgerEntry[] {
    const out: LedgerEntry[] = []
    const today = bankDate(now)
    // A change authorized on a day the order already ran does not run it again that day.
    const done = new Set<string>()
    order.segments.forEach((seg, i) => {
      const until = Math.min(order.segments[i + 1]?.from ?? Infinity, order.deletedAt ?? Infinity, now + 1)
      for (const date of executionDates(seg.terms.schedule, bankDate(seg.from), today)) {
        const at = Math.max(bankInstant(date, EXECUTION_MINUTE), seg.from)
        if (at >= until || at > now || done.has(date)) continue
        done.add(date)
        const t = seg.terms
        out.push({
          entryReference: `${date.replaceAll('-', '')}${hashKey('so-exec', order.id, date).toString(16).padStart(8, '0')}`,
          accountId: order.debtorAccountId,
          at,
          bookAt: at,
          amountMinor: t.amountMinor,
          currency: t.currency,
          direction: 'DBIT',
          code: TX_CODES.standingOrder,
          counterparty: {
            ...(t.creditorName !== undefined ? { name: t.creditorName } : {}),
            ...(t.creditor.iban !== undefined ? { iban: t.creditor.iban } : {}),
            ...(t.creditor.czech ? { number: t.creditor.czech.number, prefix: t.creditor.czech.prefix || undefined, bankCode: t.creditor.czech.bankCode } : {}),
            ...(t.creditor.bic !== undefined ? { bic: t.creditor.bic } : {}),
          },
          ...(t.remittance ? { remittance: t.remittance } : {}),
          additionalInfo: `Trvaly prikaz ${order.id}`,
        })
      }
    })
    return out
  }

  executionsFor(account: SimAccount, now: number): LedgerEntry[] {
    const out: LedgerEntry[] = []
    for (const o of this.#orders.values()) if (o.debtorAccountId === account.id) out.push(...this.executions(o, now))
    return out
  }

  realized(order: StandingOrder): Array<{ transactionIdentification: string; date: string; amount: { value: number; currency: string } }> {
    return this.executions(order, this.#bank.clock.now()).map((e) => ({
      transactionIdentification: e.entryReference,
      date: bankDate(e.at),
      amount: { value: e.amountMinor / 100, currency: e.currency },
    }))
  }

  #ownedBy(consent: Consent, id: string): StandingOrder {
    const o = this.#orders.get(id)
    if (!o || o.clientId !== consent.clientId || o.userId !== consent.userId || this.status(o) === 'CANC') {
      throw new BankApiError(404, { error: 'ID_NOT_FOUND', scope: 'standingOrderId', message: `standing order ${id} does not exist` })
    }
    return o
  }

  /**
   * Lookup for GET detail and the PISP operations. AISP tokens see every order on
   * the consented accounts; PISP tokens the orders this application created for this client.
   */
  find(consent: Consent, id: string, options: { includeDeleted?: boolean } = {}): StandingOrder {
    const o = this.#orders.get(id)
    const visible =
      o !== undefined &&
      o.userId === consent.userId &&
      (consent.scope === 'AISP' ? consent.accountIds.includes(o.debtorAccountId) && o.segments.length > 0 : o.clientId === consent.clientId) &&
      (options.includeDeleted === true || this.status(o) !== 'CANC')
    if (!visible) throw new BankApiError(404, { error: 'ID_NOT_FOUND', scope: 'standingOrderId', message: `standing order ${id} does not exist` })
    return o
  }

  /** Active orders (authorized, not finished or deleted) on the consented accounts in a currency. */
  listActive(consent: Consent, currency: string): StandingOrder[] {
    return [...this.#orders.values()]
      .filter((o) => o.userId === consent.userId && consent.accountIds.includes(o.debtorAccountId))
      .filter((o) => this.#bank.account(o.debtorAccountId)?.currency === currency)
      .filter((o) => this.status(o) === 'ACSP')
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
  }

  byId(id: string): StandingOrder | undefined {
    return this.#orders.get(id)
  }

  renderSummary(order: StandingOrder): Record<string, unknown> {
    const terms = this.#current(order) as StandingOrderTerms
    const account = this.#bank.account(order.debtorAccountId) as SimAccount
    const next = this.status(order) === 'ACSP' ? this.#next(terms.schedule) : undefined
    return {
      standingOrderIdentification: { ...(terms.instructionId !== undefined ? { instructionIdentification: terms.instructionId } : {}), transactionIdentification: order.id },
      amount: { instructedAmount: { value: terms.amountMinor / 100, currency: terms.currency } },
      requestedExecutionDate: terms.schedule.firstDate,
      ...(next !== undefined ? { nextExecutionDate: next } : {}),
      standingOrder: {
        execution: { interval: terms.schedule.interval, mode: terms.schedule.mode, modeDue: 'DUE_DAY_OF_MONTH' },
        ...(terms.schedule.lastExecutionDate ? { validity: { lastExecutionDate: terms.schedule.lastExecutionDate } } : {}),
      },
      debtorAccount: { id: account.id, identification: { iban: account.iban }, currency: account.currency },
      creditorAccount: terms.echo.creditorAccount,
      instructionStatus: this.status(order),
    }
  }

  renderDetail(order: StandingOrder): Record<string, unknown> {
    const terms = this.#current(order) as StandingOrderTerms
    const s = order.signing
    return {
      ...this.renderSummary(order),
      paymentTypeInformation: { serviceLevel: { code: 'DMCT' } },
      ...(terms.echo.creditorAgent !== undefined ? { creditorAgent: terms.echo.creditorAgent } : {}),
      ...(terms.echo.creditor !== undefined ? { creditor: terms.echo.creditor } : {}),
      ...(terms.echo.remittanceInformation !== undefined ? { remittanceInformation: terms.echo.remittanceInformation } : {}),
      ...(s ? { signInfo: { state: s.state, signId: s.signId, signID: s.signId } } : {}),
      ...(s && s.state === 'OPEN' && s.kind !== 'CREATE' ? { pendingChange: s.kind } : {}),
    }
  }
}
