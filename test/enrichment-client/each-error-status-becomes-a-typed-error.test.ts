import {
  EnrichmentAuthError,
  EnrichmentBadRequestError,
  EnrichmentForbiddenError,
  EnrichmentMethodNotAllowedError,
  EnrichmentNetworkError,
  EnrichmentNotFoundError,
  EnrichmentNotImplementedError,
  EnrichmentServerError,
  EnrichmentThrottledError,
  EnrichmentTimeoutError,
  EnrichmentUnauthorizedError,
  EnrichmentUnsupportedMediaTypeError,
  type EnrichmentClient,
  type EnrichmentClientOptions,
} from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { Agent, type Dispatcher } from 'undici'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  BASIC,
  LIMITED_OAUTH,
  admin,
  cardInput,
  clearFaults,
  instantClock,
  newClient,
  rejection,
  resetStats,
  oneSample,
  samples,
  setFaults,
  startSim,
  stats,
  type SampleFound,
  type SimSample,
} from './sim-harness.ts'

/**
 * Every status of the spec, produced by the situation that causes it at the
 * simulator, reaches the caller as its typed error, with the right verdict on
 * whether a retry can help.
 */

let sim: EnrichmentSim
let found: SimSample
const clients: EnrichmentClient[] = []
const agents: Dispatcher[] = []

function client(options: Partial<EnrichmentClientOptions> = {}): EnrichmentClient {
  const c = newClient(sim, { clock: instantClock(), ...options })
  clients.push(c)
  return c
}

/**
 * A dispatcher that changes outgoing requests the way a client built for another
 * API version would (other method, body type, path), so that the simulator's
 * 405, 415 and 501 answers come from their real causes.
 */
function rewriting(change: (opts: Dispatcher.DispatchOptions) => Dispatcher.DispatchOptions): Dispatcher {
  const agent = new Agent().compose((dispatch) => (opts, handler) => dispatch(change(opts), handler))
  agents.push(agent)
  return agent
}

beforeAll(async () => {
  sim = await startSim()
  found = await oneSample(sim, { count: 1, kind: 'card', outcome: 'found', seed: 11 })
})

beforeEach(async () => {
  await clearFaults(sim)
  await resetStats(sim)
})

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()))
  await Promise.all(agents.splice(0).map((a) => a.close()))
})

afterAll(async () => {
  await sim?.close()
})

describe('4xx', () => {
  it('400: invalid input is a record-scoped EnrichmentBadRequestError naming the parameter, not retried', async () => {
    const err = await rejection(client().findByCardTransaction({ ...cardInput(found), mcc: '54x1' }))
    expect(err).toBeInstanceOf(EnrichmentBadRequestError)
    expect(err).toMatchObject({
      status: 400,
      retriable: false,
      recordScoped: true,
      apiError: { code: 'INVALID_PARAMETER', parameter: 'mcc' },
    })
    expect(err.message).toMatch(
      /^enrichment\.findByCardTransaction: GET http:\/\/127\.0\.0\.1:\d+\/v5\/shops\/findByCardTransaction\?.*mcc=\*.* answered 400/,
    )
    // The URL in the error hides query values; the API's own message may quote the offending one.
    expect((err as EnrichmentBadRequestError).details.url).not.toContain('54x1')
    expect((await stats(sim)).requests.byOperation.findByCardTransaction).toBe(1)
  })

  it('400: nothing identifying (only empty values) is rejected too', async () => {
    const err = await rejection(
      client().findByCardTransaction({ merchantId: '', description: null, mcc: '5411' }),
    )
    expect(err).toMatchObject({
      code: 'ENRICHMENT_BAD_REQUEST',
      apiError: { code: 'NO_IDENTIFYING_PARAMETER' },
    })
  })

  it('400 in a batch entry: only that entry is invalid', async () => {
    const results = await client().findByCardTransactionBatch([
      cardInput(found),
      { ...cardInput(found), country: 'CZE' },
    ])
    expect(results[0]).toMatchObject({ status: 'found', shopUid: (found.expected as SampleFound).shopUid })
    expect(results[1]).toMatchObject({
      status: 'invalid',
      error: { code: 'INVALID_PARAMETER', parameter: 'country' },
    })
  })

  it('401: wrong Basic credentials give EnrichmentUnauthorizedError, not retried', async () => {
    const err = await rejection(
      client({ credentials: { ...BASIC, password: 'wrong' } }).getShop(
        (found.expected as SampleFound).shopUid,
      ),
    )
    expect(err).toBeInstanceOf(EnrichmentUnauthorizedError)
    expect(err).toMatchObject({ status: 401, retriable: false, apiError: { code: 'INVALID_CREDENTIALS' } })
    expect(JSON.stringify((err as EnrichmentUnauthorizedError).toJSON())).not.toContain('wrong')
    expect((await stats(sim)).requests.byOperation.getShop).toBe(1)
  })

  it('401 at the token endpoint: a wrong client secret is an EnrichmentAuthError without the secret', async () => {
    const err = await rejection(
      client({
        credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'not-the-secret' },
      }).getShop('x'),
    )
    expect(err).toBeInstanceOf(EnrichmentAuthError)
    expect(err).toMatchObject({ status: 401, oauthError: 'invalid_client', retriable: false })
    expect(`${err.message} ${JSON.stringify((err as EnrichmentAuthError).toJSON())}`).not.toContain(
      'not-the-secret',
    )
    expect((await stats(sim)).requests.byOperation.getShop).toBeUndefined()
  })

  it('401 after revocation: the client renews its token once and succeeds', async () => {
    const c = client()
    await c.getShop((found.expected as SampleFound).shopUid)
    await setFaults(sim, { revokeTokens: true })
    await resetStats(sim)
    const shop = await c.getShop((found.expected as SampleFound).shopUid)
    expect(shop.uid).toBe((found.expected as SampleFound).shopUid)
    const s = await stats(sim)
    expect(s.tokenRequests).toBe(1)
    expect(s.requests.byOperation.getShop).toBe(2)
    expect(s.requests.byStatus['401']).toBe(1)
  })

  it('403: a credential without the invalidations scope gets EnrichmentForbiddenError', async () => {
    const limited = client({ credentials: LIMITED_OAUTH })
    const err = await rejection(limited.getInvalidations({ fromId: 0 }))
    expect(err).toBeInstanceOf(EnrichmentForbiddenError)
    expect(err).toMatchObject({
      status: 403,
      retriable: false,
      recordScoped: false,
      apiError: { code: 'INSUFFICIENT_SCOPE' },
    })
    await expect(
      limited.postSuggestion({ current: { shopUid: 's' }, suggestion: 'x', source: 'partner' }),
    ).rejects.toBeInstanceOf(EnrichmentForbiddenError)
  })

  it('404: unknown shop and merchant are EnrichmentNotFoundError; a lookup of a deleted shop is notFound', async () => {
    const c = client()
    await expect(c.getShop('no-such-shop')).rejects.toMatchObject({
      code: 'ENRICHMENT_NOT_FOUND',
      status: 404,
      apiError: { code: 'SHOP_NOT_FOUND' },
    })
    await expect(c.getMerchant('no-such@cz')).rejects.toMatchObject({
      code: 'ENRICHMENT_NOT_FOUND',
      apiError: { code: 'MERCHANT_NOT_FOUND' },
    })

    const [victim] = await samples(sim, { count: 1, kind: 'card', outcome: 'found', seed: 12 })
    const uid = (victim!.expected as SampleFound).shopUid
    await admin(sim, 'POST', '/__admin/mutations', { kind: 'deleteShop', shopUid: uid })
    expect((await c.findByCardTransaction(cardInput(victim!))).status).toBe('notFound')
    await expect(c.getShop(uid)).rejects.toBeInstanceOf(EnrichmentNotFoundError)
  })

  it('404 for a route that does not exist (wrong base URL) is an error, never a silent notFound', async () => {
    const wrong = client({ baseUrl: `${sim.url}/enrichment`, tokenUrl: sim.tokenUrl })
    const err = await rejection(wrong.findByCardTransaction(cardInput(found)))
    expect(err).toBeInstanceOf(EnrichmentNotFoundError)
    expect(err).toMatchObject({ apiError: { code: 'ROUTE_NOT_FOUND' } })
  })

  it('405: a request with the wrong method gets EnrichmentMethodNotAllowedError', async () => {
    const dispatcher = rewriting((opts) =>
      opts.path.startsWith('/v5/shops/') ? { ...opts, method: 'DELETE' } : opts,
    )
    const err = await rejection(client({ dispatcher }).getShop((found.expected as SampleFound).shopUid))
    expect(err).toBeInstanceOf(EnrichmentMethodNotAllowedError)
    expect(err).toMatchObject({ status: 405, retriable: false, apiError: { code: 'METHOD_NOT_ALLOWED' } })
  })

  it('415: a body that is not JSON gets EnrichmentUnsupportedMediaTypeError', async () => {
    const dispatcher = rewriting((opts) =>
      opts.path.startsWith('/v5/') && opts.method === 'POST'
        ? { ...opts, headers: { ...(opts.headers as Record<string, string>), 'content-type': 'text/plain' } }
        : opts,
    )
    const err = await rejection(client({ dispatcher }).findByCardTransactionBatch([cardInput(found)]))
    expect(err).toBeInstanceOf(EnrichmentUnsupportedMediaTypeError)
    expect(err).toMatchObject({ status: 415, retriable: false, apiError: { code: 'UNSUPPORTED_MEDIA_TYPE' } })
  })

  it('501: a variant the service does not offer gets EnrichmentNotImplementedError', async () => {
    const dispatcher = rewriting((opts) => ({
      ...opts,
      path: opts.path.replace('/findByBankTransfer/sepa', '/findByBankTransfer/jopacc'),
    }))
    const err = await rejection(
      client({ dispatcher }).findByBankTransfer('sepa', { iban: 'CZ6508000000192000145399' }),
    )
    expect(err).toBeInstanceOf(EnrichmentNotImplementedError)
    expect(err).toMatchObject({ status: 501, retriable: false, apiError: { code: 'NOT_IMPLEMENTED' } })
  })
})

describe('5xx, throttling and transport failures', () => {
  it('5xx is retried; when it persists it is a retriable EnrichmentServerError', async () => {
    await setFaults(sim, { errorRate: 1, errorStatus: 502, pathPrefix: '/v5' })
    const err = await rejection(
      client({ retry: { retries: 2 } }).getShop((found.expected as SampleFound).shopUid),
    )
    expect(err).toBeInstanceOf(EnrichmentServerError)
    expect(err).toMatchObject({ status: 502, retriable: true, apiError: { code: 'BAD_GATEWAY' } })
    expect((await stats(sim)).requests.byOperation.getShop).toBe(3)
  })

  it('a passing 503 burst is absorbed by the retries', async () => {
    await setFaults(sim, { errorRate: 1, errorStatus: 503, count: 2, pathPrefix: '/v5' })
    const result = await client().findByCardTransactionBatch([cardInput(found)])
    expect(result[0]).toMatchObject({ status: 'found' })
    const s = await stats(sim)
    expect(s.requests.byOperation.findByCardTransactionBatch).toBe(3)
    expect(s.requests.byStatus['503']).toBe(2)
  })

  it('429 that persists is a retriable EnrichmentThrottledError carrying Retry-After', async () => {
    await setFaults(sim, { throttleRate: 1, retryAfterSeconds: 2, pathPrefix: '/v5' })
    const clock = instantClock()
    const err = await rejection(
      client({ clock, retry: { retries: 1 } }).getShop((found.expected as SampleFound).shopUid),
    )
    expect(err).toBeInstanceOf(EnrichmentThrottledError)
    expect(err).toMatchObject({ status: 429, retriable: true, retryAfterMs: 2_000 })
    expect(clock.sleeps).toEqual([expect.any(Number)])
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(2_000)
  })

  it('a reset connection is retried for reads but not for a suggestion, which is not idempotent', async () => {
    await setFaults(sim, { resetRate: 1, count: 1, pathPrefix: '/v5' })
    const c = client()
    expect((await c.getShop((found.expected as SampleFound).shopUid)).uid).toBe(
      (found.expected as SampleFound).shopUid,
    )
    expect((await stats(sim)).requests.byOperation.getShop).toBe(2)

    await setFaults(sim, { resetRate: 1, count: 1, pathPrefix: '/v5/suggestions' })
    const err = await rejection(
      c.postSuggestion({ current: { shopUid: 's' }, suggestion: 'wrong address', source: 'partner' }),
    )
    expect(err).toBeInstanceOf(EnrichmentNetworkError)
    expect(err).toMatchObject({ retriable: true })
    expect((await stats(sim)).requests.byOperation.postSuggestion).toBe(1)
  })

  it('a slow answer is an EnrichmentTimeoutError', async () => {
    await setFaults(sim, { latencyMs: 1_500, pathPrefix: '/v5' })
    const err = await rejection(
      client({ timeouts: { headersMs: 300 }, retry: { retries: 0 } }).getShop(
        (found.expected as SampleFound).shopUid,
      ),
    )
    expect(err).toBeInstanceOf(EnrichmentTimeoutError)
    expect(err).toMatchObject({ code: 'ENRICHMENT_TIMEOUT', retriable: true })
  })
})
