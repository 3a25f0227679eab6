import { randomUUID } from 'node:crypto'
import type { BankSim } from '@tep/bank-sim'
import { DEFAULT_REGISTERED_CLIENT } from '@tep/bank-sim'
import type { OpenApiContract } from './openapi-contract.ts'

export const CLIENT = DEFAULT_REGISTERED_CLIENT

export interface Answer<T = unknown> {
  status: number
  headers: Headers
  body: T
}

export interface Tokens {
  access_token: string
  refresh_token: string
  expires_in: number
  scope: string
  consent_id: string
  refresh_token_expires_in?: number
}

/** Small HTTP helpers for driving the simulator in tests, checking each answer against the OpenAPI document. */
export class BankSimHarness {
  readonly sim: BankSim
  readonly contract: OpenApiContract | undefined
  readonly adminContract: OpenApiContract | undefined

  constructor(sim: BankSim, contract?: OpenApiContract, adminContract?: OpenApiContract) {
    this.sim = sim
    this.contract = contract
    this.adminContract = adminContract
  }

  async raw(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
    const res = await fetch(`${this.sim.url}${path}`, { method, headers: init.headers, body: init.body, redirect: 'manual' })
    const text = await res.text()
    const type = res.headers.get('content-type') ?? ''
    return { status: res.status, headers: res.headers, body: type.startsWith('application/json') && text !== '' ? JSON.parse(text) : text }
  }

  /** Calls a COBS operation with the required headers; `template` is the OpenAPI path the answer is checked against. */
  async api<T = Record<string, unknown>>(
    method: string,
    template: string,
    path: string,
    token: string | undefined,
    options: { body?: unknown; headers?: Record<string, string>; omit?: string[] } = {},
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = {
      'x-request-id': randomUUID(),
      'x-ibm-client-id': CLIENT.clientId,
      'tpp-name': 'Test TPP',
      'user-involved': 'true',
      date: new Date().toUTCString(),
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    }
    for (const h of options.omit ?? []) delete headers[h]
    const answer = await this.raw(method, path, { headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) })
    this.contract?.check(method, template, answer, answer.body)
    return answer as Answer<T>
  }

  async admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
    const answer = await this.raw(method, `/__admin${path}`, body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    this.adminContract?.check(method, `/__admin${path.split('?')[0]}`, answer, answer.body)
    return answer as Answer<T>
  }

  async token(form: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
    const answer = await this.raw('POST', '/oauth2/token', { headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() })
    this.contract?.check('POST', '/oauth2/token', answer, answer.body)
    return answer
  }

  /** Consent through the admin shortcut, then the code exchange. */
  async consent(scope: 'AISP' | 'PISP' | 'CISP', username = 'user1', accountIds?: string[]): Promise<Tokens> {
    const granted = await this.admin<{ code: string; redirectUri: string }>('POST', '/consents', { username, scope, ...(accountIds ? { accountIds } : {}) })
    if (granted.status !== 201) throw new Error(`admin consent failed: ${JSON.stringify(granted.body)}`)
    const answer = await this.token({ grant_type: 'authorization_code', code: granted.body.code, redirect_uri: granted.body.redirectUri, client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret })
    if (answer.status !== 200) throw new Error(`code exchange failed: ${JSON.stringify(answer.body)}`)
    return answer.body as Tokens
  }

  async refresh(refreshToken: string): Promise<Answer> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret })
  }

  async advance(duration: string): Promise<void> {
    const answer = await this.admin('POST', '/clock', { advance: duration })
    if (answer.status !== 200) throw new Error(`clock advance failed: ${JSON.stringify(answer.body)}`)
  }

  async users(): Promise<Array<{ username: string; password: string; accounts: Array<{ id: string; iban: string; currency: string; kind: string }> }>> {
    return ((await this.admin<{ users: [] }>('GET', '/clients')).body as { users: [] }).users
  }
}
