import { describe, expect, it } from 'vitest'
import { TokenCache, type AccessToken } from './token-cache.ts'

/** A token endpoint double whose answers the test releases one by one. */
function fakeEndpoint() {
  const pending: Array<{ resolve: (t: AccessToken) => void; reject: (e: unknown) => void }> = []
  let issued = 0
  return {
    pending,
    get calls() {
      return issued
    },
    fetch: () => {
      issued++
      return new Promise<AccessToken>((resolve, reject) => pending.push({ resolve, reject }))
    },
    answer(lifetimeMs = 300_000) {
      pending.shift()!.resolve({ value: `token-${issued}`, lifetimeMs })
    },
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve()
}

describe('TokenCache', () => {
  it('shares one token request among concurrent callers and caches the token', async () => {
    let now = 1_000_000
    const endpoint = fakeEndpoint()
    const cache = new TokenCache(endpoint.fetch, { now: () => now })
    const callers = Promise.all(Array.from({ length: 20 }, () => cache.get()))
    await settle()
    expect(endpoint.calls).toBe(1)
    endpoint.answer()
    expect(new Set(await callers)).toEqual(new Set(['token-1']))
    now += 239_999
    expect(await cache.get()).toBe('token-1')
    expect(endpoint.calls).toBe(1)
  })

  it('renews at 80% of the lifetime, measured from when the request was sent, with one request for N callers', async () => {
    let now = 0
    const endpoint = fakeEndpoint()
    const cache = new TokenCache(endpoint.fetch, { now: () => now })
    const first = cache.get()
    await settle()
    now = 5_000 // the token endpoint took 5 s to answer
    endpoint.answer(300_000)
    expect(await first).toBe('token-1')

    now = 239_999 // 80% of 300 s after the request was *sent*
    expect(await cache.get()).toBe('token-1')
    now = 240_000
    const renewing = Promise.all(Array.from({ length: 50 }, () => cache.get()))
    await settle()
    expect(endpoint.calls).toBe(2)
    endpoint.answer()
    expect(new Set(await renewing)).toEqual(new Set(['token-2']))
  })

  it('peek answers the cached token synchronously until its renewal moment, and never fetches', async () => {
    let now = 0
    const endpoint = fakeEndpoint()
    const cache = new TokenCache(endpoint.fetch, { now: () => now })
    expect(cache.peek()).toBeUndefined()
    expect(endpoint.calls).toBe(0)
    const first = cache.get()
    await settle()
    endpoint.answer(300_000)
    await first
    expect(cache.peek()).toBe('token-1')
    now = 239_999
    expect(cache.peek()).toBe('token-1')
    now = 240_000
    expect(cache.peek()).toBeUndefined()
    now = 0
    cache.invalidate('token-1')
    expect(cache.peek()).toBeUndefined()
    expect(endpoint.calls).toBe(1)
  })

  it('renews minRemainingMs before expiry when that comes first', async () => {
    let now = 0
    const endpoint = fakeEndpoint()
    const cache = new TokenCache(endpoint.fetch, {
      now: () => now,
      renewal: { lifetimeFraction: 1, minRemainingMs: 30_000 },
    })
    const first = cache.get()
    await settle()
    endpoint.answer(300_000)
    await first
    now = 269_999
    expect(await cache.get()).toBe('token-1')
    now = 270_000
    const second = cache.get()
    await settle()
    endpoint.answer()
    expect(await second).toBe('token-2')
  })

  it('invalidate drops only the token that was refused, so concurrent 401s cause one renewal', async () => {
    const endpoint = fakeEndpoint()
    const cache = new TokenCache(endpoint.fetch, { now: () => 0 })
    const first = cache.get()
    await settle()
    endpoint.answer()
    const stale = await first

    cache.invalidate(stale)
    const renewed = cache.get()
    await settle()
    endpoint.answer()
    expect(await renewed).toBe('token-2')
    cache.invalidate(stale) // a late 401 for the old token must not drop the new one
    expect(await cache.get()).toBe('token-2')
    expect(endpoint.calls).toBe(2)
  })

  it('does not cache a failed token request', async () => {
    const endpoint = fakeEndpoint()
    const cache = new TokenCache(endpoint.fetch, { now: () => 0 })
    const failing = Promise.allSettled([cache.get(), cache.get()])
    await settle()
    endpoint.pending.shift()!.reject(new Error('token endpoint down'))
    expect((await failing).map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(endpoint.calls).toBe(1)
    const next = cache.get()
    await settle()
    endpoint.answer()
    expect(await next).toBe('token-2')
  })

  it('validates its policy', () => {
    expect(
      () => new TokenCache(async () => ({ value: 'x', lifetimeMs: 1 }), { renewal: { lifetimeFraction: 0 } }),
    ).toThrow(/lifetimeFraction/)
  })
})
