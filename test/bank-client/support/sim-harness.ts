import { startBankSim, DEFAULT_REGISTERED_CLIENT, type BankSim } from '@tep/bank-sim'
import {
  createBankClient,
  type BankClient,
  type BankClientOptions,
  type BankScope,
  type TokenSet,
} from '@tep/bank-client'

/**
 * The bank simulator in-process on an ephemeral port with a FROZEN wall clock: the bank's
 * time moves only through `/__admin/clock`, so generated history cannot grow under a test
 * and the 90-day rules are reached by moving the clock, not by waiting.
 */
export const SIM_START = Date.parse('2026-05-04T08:00:00Z')

/** Valid creditor IBANs: Česká spořitelna (instant capable) and Citfin 2060 (not instant capable in the sim). */
export const CREDITOR = {
  cs: 'CZ6508000000192000145399',
  citfin: 'CZ7720600000001000000128',
} as const

export interface SimAccount {
  id: string
  iban: string
  currency: string
  kind: string
}

export interface Harness {
  sim: BankSim
  bank: BankClient
  /** The bank's current time (for `now` of clients built by tests). */
  now(): Date
  admin<T = Record<string, unknown>>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T>
  accountsOf(username: string): Promise<SimAccount[]>
  /** Grants a consent through the admin shortcut (no browser) and returns the authorization code. */
  grant(
    username: string,
    scope: BankScope,
    accountIds?: string[],
  ): Promise<{ code: string; consentId: string }>
  /** grant + exchangeCode. */
  consent(username: string, scope: BankScope, accountIds?: string[]): Promise<TokenSet>
  advanceClock(duration: string): Promise<void>
  /** A second client on the same simulator with other options (limits, retry, hooks). */
  client(overrides?: Partial<BankClientOptions>): BankClient
  close(): Promise<void>
}

export async function startHarness(overrides: Partial<BankClientOptions> = {}): Promise<Harness> {
  const sim = await startBankSim({ wallClock: () => SIM_START, clients: 3 })
  const now = () => new Date(sim.clock.now())
  const clients: BankClient[] = []
  const client = (extra: Partial<BankClientOptions> = {}) => {
    const c = createBankClient({
      baseUrl: sim.url,
      clientId: DEFAULT_REGISTERED_CLIENT.clientId,
      clientSecret: DEFAULT_REGISTERED_CLIENT.clientSecret,
      redirectUri: DEFAULT_REGISTERED_CLIENT.redirectUris[0]!,
      tppName: 'TEP integration tests',
      now,
      ...overrides,
      ...extra,
    })
    clients.push(c)
    return c
  }
  const bank = client()

  async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`bank-sim admin ${method} ${path} answered ${res.status}: ${text}`)
    return JSON.parse(text) as T
  }

  const h: Harness = {
    sim,
    bank,
    now,
    admin,
    async accountsOf(username) {
      const { users } = await admin<{ users: Array<{ username: string; accounts: SimAccount[] }> }>(
        'GET',
        '/__admin/clients',
      )
      const user = users.find((u) => u.username === username)
      if (!user) throw new Error(`bank-sim has no test client ${username}`)
      return user.accounts
    },
    async grant(username, scope, accountIds) {
      return admin('POST', '/__admin/consents', { username, scope, ...(accountIds ? { accountIds } : {}) })
    },
    async consent(username, scope, accountIds) {
      const { code } = await h.grant(username, scope, accountIds)
      return bank.authorization.exchangeCode(code, { scope })
    },
    async advanceClock(duration) {
      await admin('POST', '/__admin/clock', { advance: duration })
    },
    client,
    async close() {
      await Promise.all(clients.map((c) => c.close()))
      await sim.close()
    },
  }
  return h
}
