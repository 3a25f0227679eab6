import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BankForbiddenError,
  BankNotFoundError,
  InstantPaymentRefusedError,
  InstantPaymentRuleError,
  RETURN_URL_HEADER,
  createPaymentWithInstantFallback,
  type PaymentRequest,
  type StandingOrderRequest,
} from '@tep/bank-client'
import { CREDITOR, startHarness, type Harness, type SimAccount } from './support/sim-harness.ts'

let h: Harness
let call: { accessToken: string }
let refreshToken: string
let czk: SimAccount
let eur: SimAccount
let seq = 0
const RETURN_URL = 'http://127.0.0.1:8190/payments/return'

beforeAll(async () => {
  h = await startHarness()
  const accounts = await h.accountsOf('user1')
  czk = accounts.find((a) => a.currency === 'CZK' && a.kind === 'CURRENT')!
  eur = accounts.find((a) => a.currency === 'EUR' && a.kind === 'CURRENT')!
  const tokens = await h.consent('user1', 'PISP')
  call = { accessToken: tokens.accessToken }
  refreshToken = tokens.refreshToken
})
afterAll(() => h.close())

function payment(overrides: Partial<PaymentRequest> = {}): PaymentRequest {
  seq++
  return {
    paymentIdentification: { instructionIdentification: `it-${seq}-${Date.now()}` },
    amount: { instructedAmount: { value: '250.00', currency: 'CZK' } },
    debtorAccount: { identification: { iban: czk.iban }, currency: 'CZK' },
    creditorAccount: { identification: { iban: CREDITOR.cs } },
    creditor: { name: 'Jan Novak' },
    remittanceInformation: { unstructured: 'integration test' },
    ...overrides,
  }
}

/** How many create-payment requests reached the simulator (its per-route counters). */
async function createPaymentRequests(): Promise<number> {
  const { routes } = await h.admin<{ routes: Record<string, Record<string, number>> }>(
    'GET',
    '/__admin/stats',
  )
  return Object.values(routes['POST /payments/'] ?? {}).reduce((a, b) => a + b, 0)
}

describe('payments interface', () => {
  it('answers balance checks with APPR or DECL', async () => {
    const base = { exchangeIdentification: 'chk-1', debtorAccount: { identification: { iban: czk.iban } } }
    expect(
      await h.bank.payments.paymentBalanceCheck(
        { ...base, transactionDetails: { currency: 'CZK', totalAmount: '1.00' } },
        call,
      ),
    ).toBe('APPR')
    expect(
      await h.bank.payments.paymentBalanceCheck(
        { ...base, transactionDetails: { currency: 'CZK', totalAmount: '999999999.00' } },
        call,
      ),
    ).toBe('DECL')
  })

  it('creates, reads, signs (return URL in the header) and follows a payment to settlement', async () => {
    const created = await h.bank.payments.createPayment(
      payment({ paymentTypeInformation: { instructionPriority: 'HIGH' } }),
      call,
    )
    expect(created.paymentId).toMatch(/\S/)
    expect(created.signId).toMatch(/\S/)
    expect(created.status).toBe('ACTC')
    // both spellings are present and agree
    expect(created.raw.paymentIdentification?.transactionIdentification).toBe(created.paymentId)
    expect(created.raw.signInfo?.signId).toBe(created.signId)

    const read = await h.bank.payments.getPayment(created.paymentId, call)
    expect(read.paymentId).toBe(created.paymentId)

    const redirect = await h.bank.payments.signPayment(created.paymentId, created.signId!, RETURN_URL, call)
    expect(redirect.method).toBe('GET')
    const page = await fetch(redirect.url)
    expect(page.status).toBe(200)

    await h.admin('POST', '/__admin/authorizations', { paymentId: created.paymentId, decision: 'authorize' })
    expect((await h.bank.payments.getPaymentStatus(created.paymentId, call)).instructionStatus).toBe('ACSP')
    // the detail is gone once authorized; the error says why
    const gone = await h.bank.payments.getPayment(created.paymentId, call).catch((e: unknown) => e)
    expect(gone).toBeInstanceOf(BankNotFoundError)
    expect((gone as BankNotFoundError).reason).toBe('AUTHORIZATION_COMPLETED')
    await h.advanceClock('11m')
    expect((await h.bank.payments.getPaymentStatus(created.paymentId, call)).instructionStatus).toBe('ACSC')
  })

  it('refuses a return URL the bank does not accept with the bank error on the header', async () => {
    const created = await h.bank.payments.createPayment(payment(), call)
    const err = await h.bank.payments
      .signPayment(created.paymentId, created.signId!, 'https://evil.example/return', call)
      .catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'BANK_REQUEST_REJECTED', status: 400 })
    expect((err as { errors: Array<{ scope?: string }> }).errors[0]?.scope).toBe(RETURN_URL_HEADER)
  })

  it('creates an instant payment that settles at authorization', async () => {
    const created = await h.bank.payments.createPayment(
      payment({ paymentTypeInformation: { instructionPriority: 'INST' } }),
      call,
    )
    await h.admin('POST', '/__admin/authorizations', { paymentId: created.paymentId })
    expect((await h.bank.payments.getPaymentStatus(created.paymentId, call)).instructionStatus).toBe('ACSC')
  })

  it('stops a rule-breaking instant payment before it reaches the bank', async () => {
    const before = await createPaymentRequests()
    expect(before).toBeGreaterThan(0)
    const overLimit = payment({
      paymentTypeInformation: { instructionPriority: 'INST' },
      amount: { instructedAmount: { value: '400000.01', currency: 'CZK' } },
    })
    await expect(h.bank.payments.createPayment(overLimit, call)).rejects.toBeInstanceOf(
      InstantPaymentRuleError,
    )
    const fromEur = payment({
      paymentTypeInformation: { instructionPriority: 'INST' },
      debtorAccount: { identification: { iban: eur.iban }, currency: 'EUR' },
    })
    await expect(h.bank.payments.createPayment(fromEur, call)).rejects.toMatchObject({
      code: 'INSTANT_PAYMENT_NOT_ALLOWED',
    })
    expect(await createPaymentRequests()).toBe(before)
  })

  it('turns the bank refusal of an instant payment into InstantPaymentRefusedError, and the helper re-initiates it', async () => {
    const toCitfin = payment({
      paymentTypeInformation: { instructionPriority: 'INST' },
      creditorAccount: { identification: { iban: CREDITOR.citfin } },
    })
    const err = await h.bank.payments.createPayment(toCitfin, call).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InstantPaymentRefusedError)
    expect(err).toMatchObject({ status: 400, reason: 'CREDITOR_BANK_NOT_REACHABLE' })

    const result = await createPaymentWithInstantFallback(h.bank.payments, toCitfin, {
      ...call,
      fallbackPriority: 'HIGH',
    })
    expect(result.instant).toBe(false)
    expect(result.refusal).toBeInstanceOf(InstantPaymentRefusedError)
    expect(result.payment.raw.paymentTypeInformation).toMatchObject({ instructionPriority: 'HIGH' })
  })

  it('refuses a debtor account outside the consenting client with BankForbiddenError', async () => {
    const other = (await h.accountsOf('user2')).find((a) => a.currency === 'CZK' && a.kind === 'CURRENT')!
    await expect(
      h.bank.payments.createPayment(
        payment({ debtorAccount: { identification: { iban: other.iban } } }),
        call,
      ),
    ).rejects.toBeInstanceOf(BankForbiddenError)
  })
})

describe('standing orders (payments interface)', () => {
  function order(overrides: Partial<StandingOrderRequest['standingOrder']> = {}): StandingOrderRequest {
    seq++
    const first = new Date(h.now().getTime() + 3 * 86_400_000).toISOString().slice(0, 10)
    return {
      standingOrderIdentification: { instructionIdentification: `so-${seq}-${Date.now()}` },
      amount: { instructedAmount: { value: '1200.00', currency: 'CZK' } },
      requestedExecutionDate: first,
      standingOrder: {
        alias: 'rent',
        execution: {
          interval: 'MONTHLY',
          mode: 'UNTIL_CANCELLATION',
          modeDue: 'DUE_DAY_OF_MONTH',
          intervalDue: 15,
        },
        ...overrides,
      },
      debtorAccount: { identification: { iban: czk.iban } },
      creditorAccount: { identification: { iban: CREDITOR.cs } },
      remittanceInformation: { unstructured: 'rent' },
    }
  }

  it('creates (dropping unprocessed fields with warnings), signs, updates and deletes a standing order', async () => {
    const { standingOrder, warnings } = await h.bank.payments.createStandingOrder(order(), call)
    expect(warnings.map((w) => w.field)).toEqual([
      'standingOrder.alias',
      'standingOrder.execution.intervalDue',
    ])
    expect(standingOrder.status).toBe('ACTC')
    const id = standingOrder.standingOrderId

    const redirect = await h.bank.payments.signStandingOrder(id, standingOrder.signId!, RETURN_URL, call)
    expect((await fetch(redirect.url)).status).toBe(200)
    await h.admin('POST', '/__admin/authorizations', { standingOrderId: id })
    expect((await h.bank.payments.getStandingOrderStatus(id, call)).instructionStatus).toBe('ACSP')
    expect((await h.bank.payments.getStandingOrder(id, call)).standingOrderId).toBe(id)

    const updated = await h.bank.payments.updateStandingOrder(
      id,
      order({ execution: { interval: 'QUARTERLY', mode: 'UNTIL_CANCELLATION' } }),
      call,
    )
    expect(updated.standingOrder.signId).not.toBe(standingOrder.signId)
    expect(updated.standingOrder.raw.pendingChange).toBe('UPDATE')

    const deleting = await h.bank.payments.deleteStandingOrder(id, call)
    expect(deleting.raw.pendingChange).toBe('DELETE')
    await h.bank.payments.signStandingOrder(id, deleting.signId!, RETURN_URL, call)
    await h.admin('POST', '/__admin/authorizations', { standingOrderId: id })
    expect((await h.bank.payments.getStandingOrderStatus(id, call)).instructionStatus).toBe('CANC')
    await expect(h.bank.payments.getStandingOrder(id, call)).rejects.toBeInstanceOf(BankNotFoundError)
  })

  it('lists realized payments after executions', async () => {
    const { standingOrder } = await h.bank.payments.createStandingOrder(
      order({ alias: undefined, execution: { interval: 'WEEKLY', mode: 'UNTIL_CANCELLATION' } }),
      call,
    )
    await h.admin('POST', '/__admin/authorizations', { standingOrderId: standingOrder.standingOrderId })
    await h.advanceClock('12d')
    // the access token expired meanwhile: a payments consent refreshes without end
    const next = await h.bank.authorization.refresh(refreshToken, { scope: 'PISP' })
    call = { accessToken: next.accessToken }
    refreshToken = next.refreshToken
    const status = await h.bank.payments.getStandingOrderStatus(standingOrder.standingOrderId, call)
    expect(status.realizedPayments.length).toBeGreaterThanOrEqual(1)
  })

  it('refuses unsupported terms before sending, and unprocessed fields on request', async () => {
    await expect(
      h.bank.payments.createStandingOrder(
        order({ execution: { interval: 'DAILY', mode: 'UNTIL_CANCELLATION' } }),
        call,
      ),
    ).rejects.toMatchObject({
      code: 'STANDING_ORDER_NOT_SUPPORTED',
    })
    await expect(
      h.bank.payments.createStandingOrder(order(), { ...call, unprocessedFields: 'refuse' }),
    ).rejects.toThrow(/standingOrder.alias/)
  })
})
