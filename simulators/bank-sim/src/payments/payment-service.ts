import { randomBytes } from 'node:crypto'
import { bankDate, bankInstant } from '../core/bank-dates.ts'
import { hashKey } from '../core/random.ts'
import { BankApiError } from '../errors.ts'
import { BodyReader } from '../http/body-reader.ts'
import type { BankState } from '../data/bank-state.ts'
import { TX_CODES, type Counterparty, type Remittance } from '../data/ledger-entry.ts'
import type { Consent } from '../oauth/token-service.ts'
import type { ResolvedCreditor } from './creditor.ts'
import { readOrder } from './order-input.ts'
import { classifyPayment, serviceLevelOf, type PaymentKind, type ServiceLevel } from './payment-kind.ts'
import { instantPaymentErrors } from './instant-rules.ts'
import { DEFAULT_PAYMENT_LIMITS, exceededLimit, type PaymentLimits } from './limits.ts'

export type PaymentStatus = 'ACTC' | 'ACSP' | 'ACSC' | 'RJCT'
export type SignState = 'OPEN' | 'DONE' | 'CANCELED'
export type Priority = 'NORM' | 'HIGH' | 'INST'

export interface Payment {
  id: string
  signId: string
  clientId: string
  userId: string
  debtorAccountId: string
  instructionId: string
  endToEndId?: string
  priority: Priority
  kind: PaymentKind
  serviceLevel: ServiceLevel
  amountMinor: number
  currency: string
  executionDate: string
  creditor: ResolvedCreditor
  creditorName?: string
  remittance?: Remittance
  echo: Record<string, unknown>
  status: PaymentStatus
  signState: SignState
  statusReason?: { code: string; message: string }
  createdAt: number
  authorizedAt?: number
  settleAt?: number
  entryReference?: string
}

/** Settlement delay of NORM and HIGH payments after authorization (ASSUMPTION). */
export const SETTLEMENT_DELAY_MS = 10 * 60_000

/**
 * Single payments and their state machine: ACTC (created, waits for the user) →
 * ACSP (authorized) → ACSC (settled: the debit is booked) or RJCT (cancelled by
 * the user, insufficient funds at settlement). Settlement runs lazily whenever the
 * bank is asked anything, so advancing the clock settles what is due.
 */
export class PaymentService {
  readonly #bank: BankState
  readonly #payments = new Map<string, Payment>()
  readonly limits: PaymentLimits

  constructor(bank: BankState, limits: PaymentLimits = DEFAULT_PAYMENT_LIMITS) {
    this.#bank = bank
    this.limits = limits
  }

  clear(): void {
    this.#payments.clear()
  }

  create(consent: Consent, body: unknown): Payment {
    const order = readOrder(this.#bank, consent, body, 'paymentIdentification.instructionIdentification')
    const r = new BodyReader(body)
    const priority = r.enumOf('paymentTypeInformation.instructionPriority', ['NORM', 'HIGH', 'INST'] as const) ?? 'NORM'
    const endToEndId = r.string('paymentIdentification.endToEndIdentification', { max: 35 })
    const chargeBearer = r.enumOf('chargeBearer', ['OUR', 'SHA', 'BEN'] as const)
    if (r.errors.length > 0) throw new BankApiError(400, r.errors)
    const kind = classifyPayment({ currency: order.currency, creditor: order.creditor, creditorName: order.creditorName, endToEndIdentification: endToEndId })
    if (kind === 'FOREIGN') {
      const missing = []
      if (order.creditorName === undefined) missing.push({ error: 'RR03', scope: 'creditor.name', message: 'foreign payments need the creditor name' })
      if (order.creditor.bic === undefined) missing.push({ error: 'FIELD_MISSING', scope: 'creditorAgent.financialInstitutionIdentification.bic', message: "foreign payments need the creditor bank's BIC" })
      if (missing.length > 0) throw new BankApiError(400, missing)
    }
    const now = this.#bank.clock.now()
    const today = bankDate(now)
    if (priority === 'INST') {
      const errors = instantPaymentErrors({
        kind,
        amountMinor: order.amountMinor,
        currency: order.currency,
        debtorCurrency: order.debtor.currency,
        requestedExecutionDate: order.requestedExecutionDate,
        today,
        creditor: order.creditor,
      })
      if (errors.length > 0) throw new BankApiError(400, errors)
    }
    for (const p of this.#payments.values()) {
      if (p.clientId === consent.clientId && p.userId === consent.userId && p.instructionId === order.instructionId) {
        throw new BankApiError(400, { error: 'RF01', scope: 'paymentIdentification.instructionIdentification', message: `instructionIdentification ${order.instructionId} was already used by this application` })
      }
    }
    const executionDate = order.requestedExecutionDate ?? today
    const counted = [...this.#payments.values()].filter((p) => p.debtorAccountId === order.debtor.id && p.status !== 'RJCT')
    const over = exceededLimit(this.limits, order.currency, counted.map((p) => ({ executionDate: p.executionDate, amountMinor: p.amountMinor })), { executionDate, amountMinor: order.amountMinor })
    if (over) {
      throw new BankApiError(400, {
        error: 'AM02',
        scope: 'amount.instructedAmount.value',
        parameters: { LIMIT: over.limit, REMAINING: (over.remainingMinor / 100).toFixed(2) },
        message: `the ${over.limit.toLowerCase()} payment limit of the account would be exceeded; ${(over.remainingMinor / 100).toFixed(2)} ${order.currency} remain`,
      })
    }
    const payment: Payment = {
      id: `PMT${now.toString(36).toUpperCase()}${randomBytes(5).toString('hex').toUpperCase()}`,
      signId: randomBytes(8).toString('hex'),
      clientId: consent.clientId,
      userId: consent.userId,
      debtorAccountId: order.debtor.id,
      instructionId: order.instructionId,
      ...(endToEndId !== undefined ? { endToEndId } : {}),
      priority,
      kind,
      serviceLevel: serviceLevelOf(kind, order.creditor),
      amountMinor: order.amountMinor,
      currency: order.currency,
      executionDate,
      creditor: order.creditor,
      ...(order.creditorName !== undefined ? { creditorName: order.creditorName } : {}),
      ...(order.remittance ? { remittance: order.remittance } : {}),
      echo: { ...order.echo, ...(chargeBearer ? { chargeBearer } : {}) },
      status: 'ACTC',
      signState: 'OPEN',
      createdAt: now,
    }
    this.#payments.set(payment.id, payment)
    return payment
  }

  /** The payment if this application created it for this client; 404 TRANSACTION_MISSING otherwise. */
  find(consent: Consent, id: string): Payment {
    const p = this.#payments.get(id)
    if (!p || p.clientId !== consent.clientId || p.userId !== consent.userId) {
      throw new BankApiError(404, { error: 'TRANSACTION_MISSING', scope: 'paymentId', message: `payment ${id} does not exist` })
    }
    return p
  }

  byId(id: string): Payment | undefined {
    return this.#payments.get(id)
  }

  /** The user authorized the payment on the bank's page. */
  authorize(p: Payment): void {
    if (p.signState !== 'OPEN') return
    const now = this.#bank.clock.now()
    p.signState = 'DONE'
    p.status = 'ACSP'
    p.authorizedAt = now
    p.settleAt = p.priority === 'INST' ? now : Math.max(now + SETTLEMENT_DELAY_MS, bankInstant(p.executionDate, 0))
    this.settleDue()
  }

  cancel(p: Payment): void {
    if (p.signState !== 'OPEN') return
    p.signState = 'CANCELED'
    p.status = 'RJCT'
    p.statusReason = { code: 'DS02', message: 'the user cancelled the authorization' }
  }

  /** Settles every authorized payment that is due, oldest first, checking the available balance at its settlement time. */
  settleDue(): void {
    const now = this.#bank.clock.now()
    const due = [...this.#payments.values()].filter((p) => p.status === 'ACSP' && (p.settleAt ?? Infinity) <= now).sort((a, b) => (a.settleAt as number) - (b.settleAt as number))
    for (const p of due) {
      const at = p.settleAt as number
      const account = this.#bank.account(p.debtorAccountId)
      if (!account) continue
      const available = this.#bank.ledger.balances(account, at).availableMinor
      if (available < p.amountMinor) {
        p.status = 'RJCT'
        p.statusReason = { code: 'AM04', message: `insufficient funds at settlement: ${(available / 100).toFixed(2)} ${p.currency} available` }
        continue
      }
      p.status = 'ACSC'
      p.entryReference = `${bankDate(at).replaceAll('-', '')}${hashKey('payment', p.id).toString(16).padStart(8, '0')}`
      const counterparty: Counterparty = {
        ...(p.creditorName !== undefined ? { name: p.creditorName } : {}),
        ...(p.creditor.iban !== undefined ? { iban: p.creditor.iban } : {}),
        ...(p.creditor.czech ? { number: p.creditor.czech.number, prefix: p.creditor.czech.prefix || undefined, bankCode: p.creditor.czech.bankCode } : {}),
        ...(p.creditor.bic !== undefined ? { bic: p.creditor.bic } : {}),
      }
      const code = p.priority === 'INST' ? TX_CODES.instantTransfer : TX_CODES.transfer
      this.#bank.ledger.add({
        entryReference: p.entryReference,
        accountId: account.id,
        at,
        bookAt: at,
        amountMinor: p.amountMinor,
        currency: p.currency,
        direction: 'DBIT',
        code,
        counterparty,
        ...(p.remittance ? { remittance: p.remittance } : {}),
        instructionId: p.instructionId,
        ...(p.endToEndId !== undefined ? { endToEndId: p.endToEndId } : {}),
      })
      const internal = p.creditor.iban !== undefined ? this.#bank.accountByIban(p.creditor.iban) : this.#bank.world.accounts.find((a) => p.creditor.czech?.bankCode === '5500' && a.number === p.creditor.czech.number)
      if (internal && internal.currency === p.currency) {
        const user = this.#bank.user(account.userId)
        this.#bank.ledger.add({
          entryReference: `${bankDate(at).replaceAll('-', '')}${hashKey('payment-credit', p.id).toString(16).padStart(8, '0')}`,
          accountId: internal.id,
          at,
          bookAt: at,
          amountMinor: p.amountMinor,
          currency: p.currency,
          direction: 'CRDT',
          code,
          counterparty: { name: user?.fullName ?? account.name, iban: account.iban, number: account.number, bankCode: '5500', bic: 'RZBCCZPP' },
          ...(p.remittance ? { remittance: p.remittance } : {}),
        })
      }
    }
  }

  render(p: Payment): Record<string, unknown> {
    return {
      ...p.echo,
      paymentIdentification: { instructionIdentification: p.instructionId, ...(p.endToEndId !== undefined ? { endToEndIdentification: p.endToEndId } : {}), transactionIdentification: p.id },
      transaction: { identification: p.id },
      paymentTypeInformation: { instructionPriority: p.priority, serviceLevel: { code: p.serviceLevel } },
      paymentKind: p.kind,
      requestedExecutionDate: p.executionDate,
      instructionStatus: p.status,
      signInfo: { state: p.signState, signId: p.signId, signID: p.signId },
    }
  }

  renderStatus(p: Payment): Record<string, unknown> {
    return { instructionStatus: p.status, ...(p.statusReason ? { statusReason: p.statusReason } : {}) }
  }
}
