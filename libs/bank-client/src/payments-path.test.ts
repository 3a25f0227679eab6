import { afterEach, describe, expect, it } from 'vitest'
import { BankNotFoundError } from './errors.ts'
import { startFakeBank, type FakeBank } from './fake-bank.test-support.ts'
import { payment } from './rules/fixtures.test-support.ts'

let bank: FakeBank | undefined
afterEach(async () => {
  await bank?.close()
  bank = undefined
})

const created = {
  status: 201,
  body: { transaction: { identification: 'PMT-1' }, signInfo: { signID: 'S-1' } },
}
const noOperation = (method: string, path: string) => ({
  status: 404,
  body: {
    errors: [
      { error: 'NOT_FOUND', scope: null, parameters: null, message: `no operation ${method} ${path}` },
    ],
  },
})

/** A gateway that serves payment creation at `served` only. */
function gatewayServing(served: string) {
  return (method: string, path: string) =>
    method === 'POST' && path === served ? created : noOperation(method, path)
}

describe('POST /payments/ and POST /payments', () => {
  it('falls back to /payments on a 404 that says no such operation, remembers it, and reports drift once per switch', async () => {
    bank = await startFakeBank(gatewayServing('/payments'))
    const first = await bank.client.payments.createPayment(payment())
    expect(first.paymentId).toBe('PMT-1')
    await bank.client.payments.createPayment(payment())
    expect(bank.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /payments/',
      'POST /payments',
      'POST /payments',
    ])
    expect(bank.drifts).toEqual([
      {
        api: 'bank',
        operation: 'bank.payments.createPayment',
        field: '/payments/',
        kind: 'operation-missing',
        detail: 'served at /payments',
      },
    ])
  })

  it('goes back to /payments/ when the remembered /payments stops being served (the other way round)', async () => {
    let served = '/payments'
    bank = await startFakeBank((m, p) => gatewayServing(served)(m, p))
    await bank.client.payments.createPayment(payment())
    served = '/payments/'
    await bank.client.payments.createPayment(payment())
    await bank.client.payments.createPayment(payment())
    expect(bank.requests.map((r) => r.path)).toEqual([
      '/payments/',
      '/payments',
      '/payments',
      '/payments/',
      '/payments/',
    ])
    expect(bank.drifts.map((d) => d.field)).toEqual(['/payments/', '/payments'])
  })

  it('never sends the payment again on a 404 about something the request names', async () => {
    bank = await startFakeBank(() => ({
      status: 404,
      body: {
        errors: [
          { error: 'ID_NOT_FOUND', scope: 'debtorAccount.identification.iban', message: 'no such account' },
        ],
      },
    }))
    await expect(bank.client.payments.createPayment(payment())).rejects.toBeInstanceOf(BankNotFoundError)
    expect(bank.requests).toHaveLength(1)
    expect(bank.drifts).toEqual([])
  })

  it('throws the second refusal when neither spelling is served', async () => {
    bank = await startFakeBank((m, p) => noOperation(m, p))
    const err = await bank.client.payments.createPayment(payment()).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankNotFoundError)
    expect(bank.requests.map((r) => r.path)).toEqual(['/payments/', '/payments'])
    expect(bank.drifts).toEqual([])
  })
})
