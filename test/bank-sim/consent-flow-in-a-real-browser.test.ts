import { createServer, type Server } from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { startBankSim, type BankSim } from '@tep/bank-sim'

/** The application's redirect endpoint: resolves each wait with the URL of the next request that comes back. */
class RedirectReceiver {
  readonly server: Server
  #waiters: Array<(url: URL) => void> = []

  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>back at the application</p>')
      if (url.pathname !== '/favicon.ico') this.#waiters.shift()?.(url)
    })
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callback`
  }

  next(page?: Page): Promise<URLSearchParams> {
    return this.nextUrl(page).then((u) => u.searchParams)
  }

  /**
   * The next request that comes back, or a failure after 30 s that says where the
   * browser stands instead (a bare test timeout would say nothing).
   */
  nextUrl(page?: Page, timeoutMs = 30_000): Promise<URL> {
    return new Promise((resolve, reject) => {
      const waiter = (url: URL) => {
        clearTimeout(timer)
        resolve(url)
      }
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter)
        const where = page ? ` (the browser is at ${page.url()})` : ''
        reject(new Error(`no redirect back to the application within ${timeoutMs / 1000} s${where}`))
      }, timeoutMs)
      this.#waiters.push(waiter)
    })
  }
}

const receiver = new RedirectReceiver()
let sim: BankSim
let browser: BrowserContext
let profile: string
let redirectUri: string
const app = { clientId: 'browser-app', clientSecret: 'browser-secret' }

beforeAll(async () => {
  redirectUri = await receiver.listen()
  sim = await startBankSim({ seed: 'browser', clients: 2, registeredClients: [{ ...app, redirectUris: [redirectUri], name: 'Browser Test App' }] })
  profile = await mkdtemp(join(tmpdir(), 'bank-sim-chromium-'))
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
})

afterAll(async () => {
  // Pages are not closed one by one: Chromium's page.close() on a persistent
  // context sometimes never returns after a cross-origin redirect (seen here about
  // every other run); closing the context closes them all and does return.
  await browser?.close()
  await sim?.close()
  await new Promise((resolve) => receiver.server.close(resolve))
  if (profile) await rm(profile, { recursive: true, force: true })
})

function authorizeUrl(state: string, scope = 'AISP'): string {
  return `${sim.url}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: redirectUri, scope, state })}`
}

describe('authorization-code flow in headless Chromium', () => {
  it('logs in, grants two of the accounts, returns code and state to the application, and the token reads exactly those accounts', async () => {
    const page = await browser.newPage()
    const state = randomUUID()
    await page.goto(authorizeUrl(state))
    await page.fill('#username', 'user1')
    await page.fill('#password', 'wrong')
    await page.click('button[type=submit]')
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('Wrong username or password')
    await page.fill('#username', 'user1')
    await page.fill('#password', 'password1')
    await page.click('button[type=submit]')
    await page.waitForSelector('input[name=accounts]')
    expect(await page.textContent('body')).toContain('Browser Test App')
    const boxes = page.locator('input[name=accounts]')
    const offered = await boxes.evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value))
    expect(offered.length).toBeGreaterThanOrEqual(3)
    await boxes.nth(2).uncheck()
    const callback = receiver.next(page)
    await page.click('button[value=grant]')
    const query = await callback
    expect(query.get('state')).toBe(state)
    const code = query.get('code') as string
    expect(code).toMatch(/^ac_/)

    const tokenResponse = await fetch(`${sim.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: app.clientId, client_secret: app.clientSecret }),
    })
    expect(tokenResponse.status).toBe(200)
    const tokens = (await tokenResponse.json()) as { access_token: string; scope: string }
    expect(tokens.scope).toBe('AISP')
    const accounts = await fetch(`${sim.url}/accounts`, { headers: { authorization: `Bearer ${tokens.access_token}`, 'x-request-id': randomUUID(), 'x-ibm-client-id': app.clientId } })
    expect(accounts.status).toBe(200)
    const ids = ((await accounts.json()) as { accounts: Array<{ id: string }> }).accounts.map((a) => a.id)
    expect(ids.sort()).toEqual(offered.filter((_, i) => i !== 2).sort())
  })

  it('returns access_denied with the state when the user denies', async () => {
    const page = await browser.newPage()
    const state = randomUUID()
    await page.goto(authorizeUrl(state, 'PISP'))
    await page.fill('#username', 'user2')
    await page.fill('#password', 'password2')
    await page.click('button[type=submit]')
    await page.waitForSelector('button[value=deny]')
    const callback = receiver.next(page)
    await page.click('button[value=deny]')
    const query = await callback
    expect(query.get('error')).toBe('access_denied')
    expect(query.get('state')).toBe(state)
    expect(query.get('code')).toBeNull()
  })

  it('authorizes a payment on the bank page and returns to the application with the paymentId', async () => {
    const api = async (method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${sim.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'x-request-id': randomUUID(), 'x-ibm-client-id': app.clientId, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      })
      return (await res.json()) as unknown
    }
    const admin = await fetch(`${sim.url}/__admin/consents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'user1', scope: 'PISP', clientId: app.clientId }) })
    const { code } = (await admin.json()) as { code: string }
    const tokenRes = await fetch(`${sim.url}/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: app.clientId, client_secret: app.clientSecret }),
    })
    const { access_token: token } = (await tokenRes.json()) as { access_token: string }
    const clients = (await (await fetch(`${sim.url}/__admin/clients`)).json()) as { users: Array<{ accounts: Array<{ iban: string; currency: string; kind: string }> }> }
    const debtor = clients.users[0]?.accounts.find((a) => a.kind === 'CURRENT' && a.currency === 'CZK')?.iban as string
    const payment = (await api('POST', '/payments/', token, {
      paymentIdentification: { instructionIdentification: 'BROWSER-1' },
      amount: { instructedAmount: { value: 321, currency: 'CZK' } },
      debtorAccount: { identification: { iban: debtor } },
      creditorAccount: { identification: { other: { identification: '19-2000145399/0800' } } },
    })) as { transaction: { identification: string }; signInfo: { signID: string } }
    const id = payment.transaction.identification
    const returnUrl = new URL('/payment-done', redirectUri).toString()
    const sign = (await api('POST', `/payments/${id}/sign/${payment.signInfo.signID}`, token, undefined, { 'tpp-redirect-uri': returnUrl })) as { href: { url: string } }

    const page = await browser.newPage()
    await page.goto(sign.href.url)
    expect(await page.textContent('body')).toContain('321.00 CZK')
    await page.fill('#username', 'user1')
    await page.fill('#password', 'password1')
    const back = receiver.nextUrl(page)
    await page.click('button[value=authorize]')
    const url = await back
    expect(url.pathname).toBe('/payment-done')
    expect(url.searchParams.get('paymentId')).toBe(id)
    expect(await api('GET', `/payments/${id}/status`, token)).toEqual({ instructionStatus: 'ACSP' })
  })
})
