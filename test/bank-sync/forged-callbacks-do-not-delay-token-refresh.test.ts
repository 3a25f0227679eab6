/**
 * Anyone able to start consents (an authenticated customer) can send the gateway
 * callbacks with valid states and junk codes; each costs a token request at the
 * bank. 900 of them must not delay the token refresh of a real consent: the
 * callbacks run on their own bounded budget (a few at once, a short queue, 503
 * beyond) and the sync refreshes on its own limiter.
 */
import { Agent, fetch } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait-for.ts'
import { startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

interface Stats {
  routes: Record<string, Record<string, number>>
}

const FORGED = 900
const BUDGET = { maxConcurrent: 2, maxQueued: 16 }

describe('forged consent callbacks', () => {
  let h: Harness
  let instance: Instance
  let gatewayUrl: string

  beforeAll(async () => {
    h = await startHarness({ partitions: 1 })
    instance = await h.startInstance({
      gateway: { port: h.gatewayPort, host: '127.0.0.1', customerTokenKey: h.customerTokenKey, callbackBudget: BUDGET },
    })
    gatewayUrl = instance.sync.gatewayUrl as string
  })
  afterAll(async () => {
    await h?.admin('DELETE', '/__admin/faults')
    await h?.close()
  })

  it(`${FORGED} forged callbacks do not delay the refresh of a real consent`, async () => {
    const real = await h.grantThroughGateway(gatewayUrl, 'customer-real', 'user1')
    expect(real.callback.status).toBe(201)
    await h.waitForSync(instance, real.consentId, 0, 'synced')
    const issuedBefore = instance.sync.ownedConsent(real.consentId)?.tokenIssuedAt

    // The attacker's flows: valid states and their cookies, junk codes. One customer
    // is held to CONSENT_GATEWAY_CUSTOMER_LIMIT starts and callbacks
    // (consent-gateway-limits.test.ts), so this attacker holds many customers' tokens,
    // which only the budget can stop.
    const flows: Array<Awaited<ReturnType<Harness['startConsent']>>> = []
    for (let i = 0; i < FORGED; i += 50) {
      flows.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => h.startConsent(gatewayUrl, `attacker-${i + j}`)))))
    }
    // Every token request takes 6 s at the bank (under the client's 10 s timeout): the
    // forged exchanges the budget lets through hold it for 9 rounds of 6 s, and the
    // refresh pays 6 s too, so "not delayed" is a comparison with a wide margin.
    await h.admin('PUT', '/__admin/faults', { latencyMs: 6_000, pathPrefix: '/oauth2/token' })
    // An attacker's many connections, but not so many that the test's own machine resets them.
    const attackerAgent = new Agent({ connections: 32 })
    const statsBefore = await h.admin<Stats>('GET', '/__admin/stats')

    const statuses: number[] = []
    const forged = flows.map((f, i) =>
      fetch(`${h.redirectUri}?code=forged-${i}&state=${encodeURIComponent(f.state)}`, {
        headers: { accept: 'application/json', cookie: f.cookie },
        dispatcher: attackerAgent,
      }).then((res) => {
        statuses.push(res.status)
        return res.status
      }),
    )

    // Every forged callback has been answered but those the budget holds (running or queued).
    const held = BUDGET.maxConcurrent + BUDGET.maxQueued
    await waitFor(
      'all forged callbacks but the budget\'s share to be answered',
      () => {
        if (statuses.length >= FORGED - held) return true
        throw new Error(`answers so far by status: ${JSON.stringify(countBy(statuses))}`)
      },
      { timeoutMs: 60_000 },
    )
    // The real consent's access token expires: its next sync refreshes it.
    const mark = instance.syncs.length
    await h.advanceClock('2h')
    // A sync already running when the clock moved can finish without refreshing
    // (seen once in a full suite on a busy machine): wait for the refresh itself.
    await waitFor(
      "the real consent's token to be refreshed",
      () => {
        const issuedAt = instance.sync.ownedConsent(real.consentId)?.tokenIssuedAt
        if (issuedAt != null && issuedAt > (issuedBefore ?? 0)) return true
        throw new Error(`tokenIssuedAt still ${issuedAt}`)
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    )
    const unansweredAtRefresh = FORGED - statuses.length
    const outcome = await h.waitForSync(instance, real.consentId, mark, 'synced')
    expect(outcome.kind).toBe('synced')

    // The refresh did not wait for the forged exchanges the budget let through.
    expect(unansweredAtRefresh).toBeGreaterThan(0)
    await Promise.all(forged)
    await attackerAgent.close()
    const admitted = statuses.filter((s) => s !== 503).length
    // Beyond the budget, refused at once (503, Retry-After) without a token request; the
    // ones let through got the bank's refusal of their junk code.
    // (a held exchange may end, and free its slot, while the last of the 900 still arrive)
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(FORGED - 2 * held)
    expect(statuses.filter((s) => s !== 503 && s !== 400)).toEqual([])
    const statsAfter = await h.admin<Stats>('GET', '/__admin/stats')
    const tokenCalls = (s: Stats) => Object.values(s.routes['POST /oauth2/token'] ?? {}).reduce((a, b) => a + b, 0)
    // Forged exchanges that reached the bank, plus the one refresh (and nothing else).
    expect(tokenCalls(statsAfter) - tokenCalls(statsBefore)).toBeLessThanOrEqual(admitted + 2)
  }, 240_000)
})

function countBy(values: number[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const v of values) out[v] = (out[v] ?? 0) + 1
  return out
}
