import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpAbortedError, createRequestLimiter, type RetryInfo } from '@tep/http'
import { BankThrottledError, DEFAULT_AUTHORIZATION_LIMITS } from '@tep/bank-client'
import { waitFor } from '../support/wait-for.ts'
import { startHarness, type Harness } from './support/sim-harness.ts'

let h: Harness
let accessToken: string
beforeAll(async () => {
  h = await startHarness()
  accessToken = (await h.consent('user1', 'AISP')).accessToken
})
afterAll(() => h.close())

async function tokenRequests(): Promise<number> {
  const { routes } = await h.admin<{ routes: Record<string, Record<string, number>> }>(
    'GET',
    '/__admin/stats',
  )
  return Object.values(routes['POST /oauth2/token'] ?? {}).reduce((a, b) => a + b, 0)
}

describe('rate limits', () => {
  it('retries a throttled read after the Retry-After the bank asked for', async () => {
    const retries: RetryInfo[] = []
    const bank = h.client({
      retry: { initialDelayMs: 1, maxDelayMs: 5 },
      hooks: { onRetry: (r) => retries.push(r) },
    })
    await h.admin('PUT', '/__admin/faults', {
      throttleRate: 1,
      retryAfterSeconds: 1,
      pathPrefix: '/accounts',
      count: 2,
    })
    const accounts = await bank.accounts.listAccounts({ accessToken })
    expect(accounts.length).toBeGreaterThan(0)
    expect(retries).toHaveLength(2)
    // the backoff ceiling is 5 ms, so only Retry-After can explain a 1 s wait
    for (const r of retries) {
      expect(r.error.code).toBe('HTTP_THROTTLED')
      expect(r.delayMs).toBeGreaterThanOrEqual(1000)
    }
  })

  it('hands a Retry-After longer than the in-line maximum to the caller as BankThrottledError', async () => {
    const retries: RetryInfo[] = []
    const bank = h.client({ retry: { maxRetryAfterMs: 5_000 }, hooks: { onRetry: (r) => retries.push(r) } })
    await h.admin('PUT', '/__admin/faults', {
      throttleRate: 1,
      retryAfterSeconds: 120,
      pathPrefix: '/accounts',
      count: 1,
    })
    const err = await bank.accounts
      .listAccounts({ accessToken, requestId: 'req-throttled' })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankThrottledError)
    expect(err).toMatchObject({
      code: 'BANK_THROTTLED',
      retriable: true,
      retryAfterMs: 120_000,
      requestId: 'req-throttled',
      status: 429,
    })
    expect(retries).toHaveLength(0)
  })

  it("answers the bank's 10000/hour authorization limit with BankThrottledError carrying Retry-After", async () => {
    await h.admin('PUT', '/__admin/rate-limit', { authorizationPerHour: 2 })
    try {
      const { code } = await h.grant('user2', 'AISP')
      const tokens = await h.bank.authorization.exchangeCode(code, { scope: 'AISP' })
      const next = await h.bank.authorization.refresh(tokens.refreshToken, { scope: 'AISP' })
      const err = await h.bank.authorization
        .refresh(next.refreshToken, { scope: 'AISP' })
        .catch((e: unknown) => e)
      expect(err).toBeInstanceOf(BankThrottledError)
      expect((err as BankThrottledError).retryAfterMs).toBeGreaterThan(0)
    } finally {
      await h.admin('PUT', '/__admin/rate-limit', { authorizationPerHour: 10_000 })
    }
  })

  it('keeps token calls under the authorization limit on the client side: the next call waits instead of being sent', async () => {
    expect(DEFAULT_AUTHORIZATION_LIMITS.perInterval).toEqual({ requests: 900, intervalMs: 360_000 })
    const limiter = createRequestLimiter({
      maxConcurrent: 1,
      perInterval: { requests: 2, intervalMs: 3_600_000 },
    })
    const bank = h.client({ authorizationLimits: limiter })
    try {
      const first = await bank.authorization.exchangeCode((await h.grant('user3', 'CISP')).code, {
        scope: 'CISP',
      })
      await bank.authorization.refresh(first.refreshToken, { scope: 'CISP' })
      const sent = await tokenRequests()
      const abort = new AbortController()
      const third = bank.authorization.exchangeCode((await h.grant('user3', 'CISP')).code, {
        scope: 'CISP',
        signal: abort.signal,
      })
      await waitFor('the third token call to queue in the limiter', () => limiter.counts().queued === 1)
      expect(await tokenRequests()).toBe(sent)
      abort.abort()
      await expect(third).rejects.toBeInstanceOf(HttpAbortedError)
    } finally {
      await limiter.stop()
    }
  })
})
