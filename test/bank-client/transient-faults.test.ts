import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RetryInfo } from '@tep/http'
import { BankUnavailableError } from '@tep/bank-client'
import { CREDITOR, startHarness, type Harness } from './support/sim-harness.ts'

let h: Harness
let aisp: string
let pisp: string
beforeAll(async () => {
  h = await startHarness()
  aisp = (await h.consent('user1', 'AISP')).accessToken
  pisp = (await h.consent('user1', 'PISP')).accessToken
})
afterAll(async () => {
  await h.admin('DELETE', '/__admin/faults')
  await h.close()
})

describe('transient faults', () => {
  it('retries reads through a connection reset and a 503', async () => {
    const retries: RetryInfo[] = []
    const bank = h.client({
      retry: { initialDelayMs: 1, maxDelayMs: 5 },
      hooks: { onRetry: (r) => retries.push(r) },
    })
    await h.admin('PUT', '/__admin/faults', { resetRate: 1, pathPrefix: '/accounts', count: 1 })
    expect((await bank.accounts.listAccounts({ accessToken: aisp })).length).toBeGreaterThan(0)
    await h.admin('PUT', '/__admin/faults', {
      errorRate: 1,
      errorStatus: 503,
      pathPrefix: '/accounts',
      count: 1,
    })
    expect((await bank.accounts.listAccounts({ accessToken: aisp })).length).toBeGreaterThan(0)
    expect(retries.map((r) => r.error.code)).toEqual(['HTTP_NETWORK_ERROR', 'HTTP_STATUS'])
  })

  it('gives up on a 503 storm with a retriable BankUnavailableError', async () => {
    const bank = h.client({ retry: { retries: 2, initialDelayMs: 1, maxDelayMs: 5 } })
    await h.admin('PUT', '/__admin/faults', {
      errorRate: 1,
      errorStatus: 503,
      pathPrefix: '/accounts',
      count: 3,
    })
    const err = await bank.accounts.listAccounts({ accessToken: aisp }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankUnavailableError)
    expect(err).toMatchObject({ retriable: true, status: 503, bankCodes: ['NARR'] })
  })

  it('does not send a payment twice when the answer to its creation was lost', async () => {
    const bank = h.client({ retry: { initialDelayMs: 1, maxDelayMs: 5 } })
    const accounts = await h.accountsOf('user1')
    const czk = accounts.find((a) => a.currency === 'CZK' && a.kind === 'CURRENT')!
    await h.admin('PUT', '/__admin/faults', {
      errorRate: 1,
      errorStatus: 503,
      pathPrefix: '/payments',
      count: 1,
    })
    const req = {
      paymentIdentification: { instructionIdentification: `fault-${Date.now()}` },
      amount: { instructedAmount: { value: '10.00', currency: 'CZK' } },
      debtorAccount: { identification: { iban: czk.iban } },
      creditorAccount: { identification: { iban: CREDITOR.cs } },
    }
    await expect(bank.payments.createPayment(req, { accessToken: pisp })).rejects.toMatchObject({
      code: 'BANK_UNAVAILABLE',
    })
    const { routes } = await h.admin<{ routes: Record<string, Record<string, number>> }>(
      'GET',
      '/__admin/stats',
    )
    expect(routes['POST /payments/']).toEqual({ '503': 1 })
  })
})
