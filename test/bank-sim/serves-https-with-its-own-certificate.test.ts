import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, fetch } from 'undici'
import { startBankSim, DEFAULT_REGISTERED_CLIENT, type BankSim } from '@tep/bank-sim'

let sim: BankSim
let agent: Agent

beforeAll(async () => {
  sim = await startBankSim({ https: true, clients: 1 })
  agent = new Agent({ connect: { ca: sim.ca } })
})

afterAll(async () => {
  await agent?.close()
  await sim?.close()
})

describe('bank-sim over HTTPS', () => {
  it('serves the consent page and the token endpoint over TLS with the certificate it hands out', async () => {
    expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    expect(sim.ca).toContain('BEGIN CERTIFICATE')
    const page = await fetch(`${sim.url}/oauth2/authorize?response_type=code&client_id=${DEFAULT_REGISTERED_CLIENT.clientId}&scope=AISP`, { dispatcher: agent })
    expect(page.status).toBe(200)
    const grant = (await (await fetch(`${sim.url}/__admin/consents`, { dispatcher: agent, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'user1', scope: 'PISP' }) })).json()) as {
      code: string
      redirectUri: string
    }
    const token = await fetch(`${sim.url}/oauth2/token`, {
      dispatcher: agent,
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code: grant.code, redirect_uri: grant.redirectUri, client_id: DEFAULT_REGISTERED_CLIENT.clientId, client_secret: DEFAULT_REGISTERED_CLIENT.clientSecret }),
    })
    expect(token.status).toBe(200)
  })

  it('is not reachable without trusting the certificate or over plain HTTP', async () => {
    await expect(fetch(`${sim.url}/__admin/clock`)).rejects.toThrow()
    await expect(fetch(sim.url.replace('https:', 'http:') + '/__admin/clock')).rejects.toThrow()
  })
})
