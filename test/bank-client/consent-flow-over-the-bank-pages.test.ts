import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BankAuthorizationCallbackError, generateState } from '@tep/bank-client'
import { startHarness, type Harness } from './support/sim-harness.ts'

// The consent pages driven over plain HTTP form posts (the browser test of the simulator
// drives the same pages in Chromium): proves that the URL this client builds and the
// callback it parses work with the bank's real redirect.

let h: Harness
beforeAll(async () => {
  h = await startHarness()
})
afterAll(() => h.close())

function hiddenRequestId(html: string): string {
  const m = /name="request" value="([^"]+)"/.exec(html)
  if (!m) throw new Error(`no hidden request field in the page: ${html.slice(0, 300)}`)
  return m[1]!
}

async function post(form: Record<string, string | string[]>): Promise<Response> {
  const body = new URLSearchParams()
  for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one)
  return fetch(`${h.sim.url}/oauth2/authorize`, { method: 'POST', body, redirect: 'manual' })
}

/** Walks login and consent; returns the Location the bank redirects the browser to. */
async function consentOverPages(
  authorizeUrl: string,
  decision: 'grant' | 'deny',
  accounts: string[] = [],
): Promise<string> {
  const login = await fetch(authorizeUrl)
  expect(login.status).toBe(200)
  const request = hiddenRequestId(await login.text())
  const consentPage = await post({ step: 'login', request, username: 'user1', password: 'password1' })
  expect(consentPage.status).toBe(200)
  const done = await post({
    step: 'consent',
    request: hiddenRequestId(await consentPage.text()),
    decision,
    accounts,
  })
  expect(done.status).toBe(302)
  return done.headers.get('location')!
}

describe('consent flow over the bank pages', () => {
  it('grants, comes back with code and state, and the tokens see only the chosen account', async () => {
    const chosen = (await h.accountsOf('user1')).find((a) => a.currency === 'EUR')!
    const state = generateState()
    const location = await consentOverPages(
      h.bank.authorization.buildAuthorizationUrl({ scope: 'AISP', state }),
      'grant',
      [chosen.id],
    )
    const { code } = h.bank.authorization.parseCallback(location, state)
    const tokens = await h.bank.authorization.exchangeCode(code, { scope: 'AISP' })
    const accounts = await h.bank.accounts.listAccounts({ accessToken: tokens.accessToken })
    expect(accounts.map((a) => a.id)).toEqual([chosen.id])
  })

  it('reports a denial as AUTHORIZATION_DENIED and a foreign state as AUTHORIZATION_STATE_MISMATCH', async () => {
    const state = generateState()
    const location = await consentOverPages(
      h.bank.authorization.buildAuthorizationUrl({ scope: 'PISP', state }),
      'deny',
    )
    expect(() => h.bank.authorization.parseCallback(location, state)).toThrow(
      expect.objectContaining({ code: 'AUTHORIZATION_DENIED' }),
    )
    try {
      h.bank.authorization.parseCallback(location, generateState())
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(BankAuthorizationCallbackError)
      expect((err as BankAuthorizationCallbackError).code).toBe('AUTHORIZATION_STATE_MISMATCH')
    }
  })
})
