import { describe, expect, it } from 'vitest'
import { BankRequestRejectedError, InstantPaymentRefusedError, InstantPaymentRuleError } from './errors.ts'
import { createPaymentWithInstantFallback } from './instant-fallback.ts'
import type { Payment, PaymentRequest } from './model/payments.ts'
import type { PaymentsClient } from './payments-client.ts'
import { payment } from './rules/fixtures.test-support.ts'

/** A PaymentsClient stand-in: answers each createPayment with the next scripted outcome. */
function fakePayments(outcomes: Array<Error | 'ok'>) {
  const seen: Array<{ req: PaymentRequest; requestId: string | undefined }> = []
  const fake = {
    async createPayment(req: PaymentRequest, options: { requestId?: string } = {}): Promise<Payment> {
      seen.push({ req, requestId: options.requestId })
      const next = outcomes.shift()
      if (next instanceof Error) throw next
      return { paymentId: `p${seen.length}`, signId: 's', status: 'ACTC', raw: {} }
    },
  }
  return { payments: fake as unknown as PaymentsClient, seen }
}

const refused = () =>
  new InstantPaymentRefusedError('no', {
    operation: 'op',
    requestId: 'r',
    status: 400,
    errors: [{ error: 'NO_PART' }],
  })
const inst = payment({ paymentTypeInformation: { instructionPriority: 'INST' } })

describe('createPaymentWithInstantFallback', () => {
  it('keeps an accepted instant payment', async () => {
    const { payments, seen } = fakePayments(['ok'])
    const r = await createPaymentWithInstantFallback(payments, inst)
    expect(r).toMatchObject({ instant: true, refusal: undefined, payment: { paymentId: 'p1' } })
    expect(seen).toHaveLength(1)
  })

  it('re-initiates a bank-refused instant payment as NORM (default) with the same id and a new request id', async () => {
    const { payments, seen } = fakePayments([refused(), 'ok'])
    const r = await createPaymentWithInstantFallback(payments, inst, { requestId: 'first' })
    expect(r.instant).toBe(false)
    expect(r.refusal).toBeInstanceOf(InstantPaymentRefusedError)
    expect(seen.map((s) => s.req.paymentTypeInformation?.instructionPriority)).toEqual(['INST', 'NORM'])
    expect(seen[1]!.req.paymentIdentification.instructionIdentification).toBe('tpp-1')
    expect(seen.map((s) => s.requestId)).toEqual(['first', undefined])
  })

  it('re-initiates after a client-side instant rule failure as HIGH with a new id when asked', async () => {
    const { payments, seen } = fakePayments([
      new InstantPaymentRuleError([{ rule: 'INSTANT_AMOUNT_LIMIT', field: 'x', message: 'm' }]),
      'ok',
    ])
    const r = await createPaymentWithInstantFallback(payments, inst, {
      fallbackPriority: 'HIGH',
      fallbackInstructionId: (id) => `${id}-n`,
    })
    expect(r.refusal).toBeInstanceOf(InstantPaymentRuleError)
    expect(seen[1]!.req.paymentTypeInformation?.instructionPriority).toBe('HIGH')
    expect(seen[1]!.req.paymentIdentification.instructionIdentification).toBe('tpp-1-n')
  })

  it('does not re-initiate on other errors, nor for non-instant payments', async () => {
    const other = new BankRequestRejectedError('x', { operation: 'op', requestId: 'r', status: 400 })
    const a = fakePayments([other])
    await expect(createPaymentWithInstantFallback(a.payments, inst)).rejects.toBe(other)
    expect(a.seen).toHaveLength(1)
    const b = fakePayments([refused()])
    await expect(createPaymentWithInstantFallback(b.payments, payment())).rejects.toBeInstanceOf(
      InstantPaymentRefusedError,
    )
    expect(b.seen).toHaveLength(1)
  })
})
