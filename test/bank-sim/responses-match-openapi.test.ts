import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBankSim, type BankSim } from '@tep/bank-sim'
import { OpenApiContract, BANK_SIM_ADMIN_OPENAPI_PATH } from './openapi-contract.ts'
import { BankSimHarness, CLIENT } from './bank-sim-harness.ts'

type Errors = { errors: Array<{ error: string; scope: string | null; parameters: Record<string, string> | null }> }

let sim: BankSim
let h: BankSimHarness
const contract = new OpenApiContract()
const adminContract = new OpenApiContract(BANK_SIM_ADMIN_OPENAPI_PATH)
let user1: Awaited<ReturnType<BankSimHarness['users']>>[number]
let czk: { id: string; iban: string }
let eur: { id: string; iban: string }
let card: { id: string; iban: string }

beforeAll(async () => {
  sim = await startBankSim({ seed: 'openapi-contract', clients: 3 })
  h = new BankSimHarness(sim, contract, adminContract)
  user1 = (await h.users())[0] as typeof user1
  czk = user1.accounts.find((a) => a.kind === 'CURRENT' && a.currency === 'CZK') as typeof czk
  eur = user1.accounts.find((a) => a.kind === 'CURRENT' && a.currency === 'EUR') as typeof eur
  card = user1.accounts.find((a) => a.kind === 'CREDIT_CARD') as typeof card
})

afterAll(async () => {
  await sim.close()
})

const firstError = (body: unknown) => (body as Errors).errors[0]

describe('authorization operations', () => {
  it('issues tokens for a code and refuses reused codes, wrong clients, missing and unsupported parameters', async () => {
    const granted = (await h.admin<{ code: string; redirectUri: string }>('POST', '/consents', { username: 'user1', scope: 'AISP' })).body
    const form = { grant_type: 'authorization_code', code: granted.code, redirect_uri: granted.redirectUri }
    const basic = `Basic ${Buffer.from(`${CLIENT.clientId}:${CLIENT.clientSecret}`).toString('base64')}`
    const ok = await h.token(form, { authorization: basic })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('cache-control')).toBe('no-store')
    expect(ok.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'AISP' })

    const reused = await h.token({ ...form, client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret })
    expect(reused.status).toBe(401)
    expect(reused.body).toMatchObject({ error: 'invalid_grant' })

    const wrongSecret = await h.token({ ...form, client_id: CLIENT.clientId, client_secret: 'nope' })
    expect(wrongSecret.status).toBe(401)
    expect(wrongSecret.body).toMatchObject({ error: 'invalid_client' })
    const wrongBasic = await h.token(form, { authorization: `Basic ${Buffer.from(`${CLIENT.clientId}:bad`).toString('base64')}` })
    expect(wrongBasic.headers.get('www-authenticate')).toMatch(/^Basic/)

    const noCode = await h.token({ grant_type: 'authorization_code', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret })
    expect(noCode.status).toBe(400)
    expect(noCode.body).toMatchObject({ error: 'invalid_request' })
    const password = await h.token({ grant_type: 'password', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret })
    expect(password.status).toBe(400)
    expect(password.body).toMatchObject({ error: 'unsupported_grant_type' })
  })

  it('answers the login page, or redirects request errors, or refuses unregistered redirect URIs without redirecting', async () => {
    const q = (p: Record<string, string>) => `/oauth2/authorize?${new URLSearchParams(p)}`
    const page = await h.raw('GET', q({ response_type: 'code', client_id: CLIENT.clientId, scope: 'AISP', state: 's1' }))
    contract.check('GET', '/oauth2/authorize', page, page.body)
    expect(page.status).toBe(200)
    expect(page.body).toContain('name="password"')

    const badScope = await h.raw('GET', q({ response_type: 'code', client_id: CLIENT.clientId, scope: 'AISP PISP', state: 's2' }))
    contract.check('GET', '/oauth2/authorize', badScope, badScope.body)
    const location = new URL(badScope.headers.get('location') as string)
    expect(`${location.origin}${location.pathname}`).toBe(CLIENT.redirectUris[0])
    expect(location.searchParams.get('error')).toBe('invalid_scope')
    expect(location.searchParams.get('state')).toBe('s2')

    const foreign = await h.raw('GET', q({ response_type: 'code', client_id: CLIENT.clientId, scope: 'AISP', redirect_uri: 'https://evil.example/cb' }))
    contract.check('GET', '/oauth2/authorize', foreign, foreign.body)
    expect(foreign.status).toBe(400)
    expect(foreign.headers.get('location')).toBeNull()

    const expired = await h.raw('POST', '/oauth2/authorize', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'step=login&request=unknown&username=user1&password=password1' })
    contract.check('POST', '/oauth2/authorize', expired, expired.body)
    expect(expired.status).toBe(400)
  })

  it('walks the login and consent forms over plain HTTP: wrong password 401, no account 400, grant 302 with code and state', async () => {
    const form = (fields: Record<string, string | string[]>) => {
      const p = new URLSearchParams()
      for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) p.append(k, x)
      return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: p.toString() }
    }
    const post = async (fields: Record<string, string | string[]>) => {
      const answer = await h.raw('POST', '/oauth2/authorize', form(fields))
      contract.check('POST', '/oauth2/authorize', answer, answer.body)
      return answer
    }
    const start = await h.raw('GET', `/oauth2/authorize?response_type=code&client_id=${CLIENT.clientId}&scope=CISP&state=st-9`)
    const request = /name="request" value="([^"]+)"/.exec(start.body as string)?.[1] as string
    expect(request).toBeDefined()
    expect((await post({ step: 'login', request, username: 'user1', password: 'nope' })).status).toBe(401)
    const consentPage = await post({ step: 'login', request, username: 'user1', password: 'password1' })
    expect(consentPage.status).toBe(200)
    const offered = [...(consentPage.body as string).matchAll(/name="accounts" value="([^"]+)"/g)].map((m) => m[1] as string)
    expect(offered.sort()).toEqual(user1.accounts.map((a) => a.id).sort())
    expect((await post({ step: 'consent', request, decision: 'grant' })).status).toBe(400)
    expect((await post({ step: 'consent', request, decision: 'grant', accounts: ['someone-elses'] })).status).toBe(400)
    const granted = await post({ step: 'consent', request, decision: 'grant', accounts: [czk.id, card.id] })
    expect(granted.status).toBe(302)
    const back = new URL(granted.headers.get('location') as string)
    expect(back.searchParams.get('state')).toBe('st-9')
    // The request is used up: replaying the form does not mint a second code.
    expect((await post({ step: 'consent', request, decision: 'grant', accounts: [czk.id] })).status).toBe(400)
    const tokens = await h.token({ grant_type: 'authorization_code', code: back.searchParams.get('code') as string, client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret })
    expect(tokens.body).toMatchObject({ scope: 'CISP' })
    expect((tokens.body as { refresh_token_expires_in?: number }).refresh_token_expires_in).toBeUndefined()

    const wrongType = await h.raw('GET', `/oauth2/authorize?response_type=token&client_id=${CLIENT.clientId}&scope=AISP&state=st-10`)
    contract.check('GET', '/oauth2/authorize', wrongType, wrongType.body)
    expect(new URL(wrongType.headers.get('location') as string).searchParams.get('error')).toBe('unsupported_response_type')
  })

  it('limits each authorization operation per client per hour and answers 429 with Retry-After', async () => {
    await h.admin('PUT', '/rate-limit', { authorizationPerHour: 2 })
    try {
      const form = { grant_type: 'refresh_token', refresh_token: 'unknown', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret }
      expect((await h.token(form)).status).toBe(401)
      expect((await h.token(form)).status).toBe(401)
      const limited = await h.token(form)
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3500)
      expect(limited.body).toMatchObject({ error: 'too_many_requests' })
      // The other operations have their own budget.
      const page = await h.raw('GET', `/oauth2/authorize?response_type=code&client_id=${CLIENT.clientId}&scope=AISP`)
      expect(page.status).toBe(200)
      await h.advance('1h')
      expect((await h.token(form)).status).toBe(401)
    } finally {
      await h.admin('PUT', '/rate-limit', { authorizationPerHour: 10_000 })
    }
  })
})

describe('accounts interface', () => {
  it('lists accounts and balances, pages the list, and refuses missing headers, tokens and scopes by their causes', async () => {
    const t = await h.consent('AISP')
    const list = await h.api<{ accounts: Array<{ id: string; cashAccountType: string }>; totalCount: number }>('GET', '/accounts', '/accounts', t.access_token)
    expect(list.status).toBe(200)
    expect(list.body.accounts.map((a) => a.id).sort()).toEqual(user1.accounts.map((a) => a.id).sort())
    expect(list.body.accounts.some((a) => a.cashAccountType === 'CARD')).toBe(true)
    const paged = await h.api<{ accounts: unknown[]; nextPage?: number }>('GET', '/accounts', '/accounts?size=1&page=1', t.access_token)
    expect(paged.body.accounts).toHaveLength(1)
    expect(paged.body.nextPage).toBe(2)
    expect(list.headers.get('x-request-id')).not.toBeNull()

    const noRequestId = await h.api('GET', '/accounts', '/accounts', t.access_token, { omit: ['x-request-id'] })
    expect(noRequestId.status).toBe(400)
    expect(firstError(noRequestId.body)).toMatchObject({ error: 'FIELD_MISSING', scope: 'X-Request-ID' })
    const noToken = await h.api('GET', '/accounts', '/accounts', undefined)
    expect(noToken.status).toBe(401)
    // Without a valid token the answer is 401 before any other check (no 400 for the missing header).
    const neither = await h.api('GET', '/accounts', '/accounts', undefined, { omit: ['x-request-id'] })
    expect(neither.status).toBe(401)
    const unknownPathNoToken = await h.api('GET', '/accounts', '/nothing-here', undefined)
    expect(unknownPathNoToken.status).toBe(401)
    expect(firstError(noToken.body)?.parameters).toEqual({ REASON: 'TOKEN_MISSING' })
    const wrongGateway = await h.api('GET', '/accounts', '/accounts', t.access_token, { headers: { 'x-ibm-client-id': 'someone-else' } })
    expect(wrongGateway.status).toBe(401)
    expect(firstError(wrongGateway.body)).toMatchObject({ scope: 'X-IBM-Client-Id' })
    const pisp = await h.consent('PISP')
    const wrongScope = await h.api('GET', '/accounts', '/accounts', pisp.access_token)
    expect(wrongScope.status).toBe(403)
    expect(firstError(wrongScope.body)).toMatchObject({ error: 'FORBIDDEN', parameters: { REQUIRED_SCOPE: 'AISP', TOKEN_SCOPE: 'PISP' } })
    const badDate = await h.api('GET', '/accounts', '/accounts', t.access_token, { headers: { date: 'yesterday' } })
    expect(badDate.status).toBe(400)

    const balance = await h.api<{ balances: Array<{ type: { codeOrProprietary: { code: string } } }> }>('GET', '/accounts/{id}/balance', `/accounts/${card.id}/balance`, t.access_token)
    expect(balance.status).toBe(200)
    expect(balance.body.balances.map((b) => b.type.codeOrProprietary.code)).toEqual(['CLBD', 'PRCD', 'CLAV'])
    const unknown = await h.api('GET', '/accounts/{id}/balance', '/accounts/NOPE/balance', t.access_token)
    expect(unknown.status).toBe(404)
    expect(firstError(unknown.body)).toMatchObject({ error: 'ID_NOT_FOUND' })
    const currency = await h.api('GET', '/accounts/{id}/balance', `/accounts/${czk.id}/balance?currency=EUR`, t.access_token)
    expect(currency.status).toBe(400)
    expect(firstError(currency.body)).toMatchObject({ error: 'AC09' })
  })

  it('pages transactions within 10..100 records and refuses history older than 90 days without a fresh token', async () => {
    const t = await h.consent('AISP')
    const path = (q: string) => `/accounts/${czk.id}/transactions?${q}`
    const first = await h.api<{ transactions: Array<{ entryReference: string }>; pageCount: number; totalCount: number; nextPage?: number }>('GET', '/accounts/{id}/transactions', path('pageSize=10'), t.access_token)
    expect(first.status).toBe(200)
    expect(first.body.transactions).toHaveLength(10)
    expect(first.body.totalCount).toBeGreaterThan(20)
    const last = await h.api<{ transactions: unknown[]; nextPage?: number }>('GET', '/accounts/{id}/transactions', path(`pageSize=10&page=${first.body.pageCount - 1}`), t.access_token)
    expect(last.body.nextPage).toBeUndefined()
    expect(last.body.transactions.length).toBe(first.body.totalCount - 10 * (first.body.pageCount - 1))
    const beyond = await h.api('GET', '/accounts/{id}/transactions', path(`pageSize=10&page=${first.body.pageCount}`), t.access_token)
    expect(beyond.status).toBe(400)
    expect(firstError(beyond.body)).toMatchObject({ error: 'PAGE_NOT_FOUND' })
    for (const size of ['9', '101']) {
      const bad = await h.api('GET', '/accounts/{id}/transactions', path(`pageSize=${size}`), t.access_token)
      expect(bad.status).toBe(400)
      expect(firstError(bad.body)).toMatchObject({ error: 'PARAMETER_INVALID', scope: 'pageSize' })
    }
    const badDate = await h.api('GET', '/accounts/{id}/transactions', path('dateFrom=2026-02-30'), t.access_token)
    expect(firstError(badDate.body)).toMatchObject({ error: 'DT01', scope: 'dateFrom' })

    const clock = (await h.admin<{ bankDate: string }>('GET', '/clock')).body
    const old = new Date(Date.parse(`${clock.bankDate}T00:00:00Z`) - 200 * 86_400_000).toISOString().slice(0, 10)
    const fresh = await h.api<{ totalCount: number }>('GET', '/accounts/{id}/transactions', path(`dateFrom=${old}&pageSize=100`), t.access_token)
    expect(fresh.status).toBe(200)
    expect(fresh.body.totalCount).toBeGreaterThan(first.body.totalCount)
    await h.advance('15m')
    const stale = await h.api('GET', '/accounts/{id}/transactions', path(`dateFrom=${old}`), t.access_token)
    expect(stale.status).toBe(401)
    expect(firstError(stale.body)).toMatchObject({ error: 'UNAUTHORISED', scope: 'dateFrom', parameters: { REASON: 'SCA_REQUIRED' } })
    const refreshed = (await h.refresh(t.refresh_token)).body as { access_token: string }
    expect((await h.api('GET', '/accounts/{id}/transactions', path(`dateFrom=${old}`), refreshed.access_token)).status).toBe(401)
    expect((await h.api('GET', '/accounts/{id}/transactions', path('pageSize=10'), refreshed.access_token)).status).toBe(200)

    const future = await h.api<{ transactions: unknown[]; pageCount: number; totalCount: number }>('GET', '/accounts/{id}/transactions', path('dateFrom=2099-01-01'), refreshed.access_token)
    expect(future.status).toBe(200)
    expect(future.body).toMatchObject({ transactions: [], pageCount: 0, totalCount: 0 })
  })

  it('limits unattended account reads per day when that PSD2 rule is switched on', async () => {
    const t = await h.consent('AISP')
    const unattended = { headers: { 'user-involved': 'false' } }
    expect((await h.admin('PUT', '/rate-limit', { unattendedReadsPerDay: 2 })).body).toMatchObject({ unattendedReadsPerDay: 2 })
    try {
      expect((await h.api('GET', '/accounts/{id}/balance', `/accounts/${czk.id}/balance`, t.access_token, unattended)).status).toBe(200)
      expect((await h.api('GET', '/accounts/{id}/transactions', `/accounts/${czk.id}/transactions?pageSize=10`, t.access_token, unattended)).status).toBe(200)
      // Later pages of the same pass and reads with the user present do not count.
      expect((await h.api('GET', '/accounts/{id}/transactions', `/accounts/${czk.id}/transactions?pageSize=10&page=1`, t.access_token, unattended)).status).toBe(200)
      expect((await h.api('GET', '/accounts/{id}/balance', `/accounts/${czk.id}/balance`, t.access_token)).status).toBe(200)
      const limited = await h.api('GET', '/accounts/{id}/balance', `/accounts/${czk.id}/balance`, t.access_token, unattended)
      expect(limited.status).toBe(429)
      expect(firstError(limited.body)).toMatchObject({ error: 'TOO_MANY_REQUESTS', scope: 'User-Involved', parameters: { REASON: 'UNATTENDED_ACCESS_LIMIT', LIMIT_PER_DAY: '2' } })
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(86_000)
      expect((await h.api('GET', '/accounts/{id}/balance', `/accounts/${card.id}/balance`, t.access_token, unattended)).status).toBe(200)
    } finally {
      await h.admin('PUT', '/rate-limit', { unattendedReadsPerDay: null })
    }
    expect((await h.api('GET', '/accounts/{id}/balance', `/accounts/${czk.id}/balance`, t.access_token, unattended)).status).toBe(200)
  })

  it('answers 401 after revocation', async () => {
    const t = await h.consent('AISP')
    await h.admin('POST', '/revoke', { consentId: t.consent_id })
    const revoked = await h.api('GET', '/accounts', '/accounts', t.access_token)
    expect(revoked.status).toBe(401)
    expect(firstError(revoked.body)?.parameters).toEqual({ REASON: 'TOKEN_REVOKED' })
    expect(revoked.headers.get('www-authenticate')).toMatch(/invalid_token/)
  })

  it('lists active standing orders by currency and shows their detail', async () => {
    const t = await h.consent('AISP')
    const czkList = await h.api<{ standingOrders: Array<{ standingOrderIdentification: { transactionIdentification: string }; debtorAccount: { currency: string } }> }>('GET', '/standingorders', '/standingorders', t.access_token)
    expect(czkList.status).toBe(200)
    expect(czkList.body.standingOrders.length).toBeGreaterThan(0)
    expect(czkList.body.standingOrders.every((o) => o.debtorAccount.currency === 'CZK')).toBe(true)
    const eurList = await h.api<{ standingOrders: Array<{ debtorAccount: { currency: string } }> }>('GET', '/standingorders', '/standingorders?currency=EUR&size=1', t.access_token)
    expect(eurList.body.standingOrders.map((o) => o.debtorAccount.currency)).toEqual(['EUR'])
    const id = czkList.body.standingOrders[0]?.standingOrderIdentification.transactionIdentification as string
    const detail = await h.api('GET', '/standingorders/{standingOrderId}', `/standingorders/${id}`, t.access_token)
    expect(detail.status).toBe(200)
    expect(detail.body).toMatchObject({ paymentTypeInformation: { serviceLevel: { code: 'DMCT' } }, instructionStatus: 'ACSP' })
    const missing = await h.api('GET', '/standingorders/{standingOrderId}', '/standingorders/SO-NOPE', t.access_token)
    expect(missing.status).toBe(404)
    const badCurrency = await h.api('GET', '/standingorders', '/standingorders?currency=euro', t.access_token)
    expect(badCurrency.status).toBe(400)
  })
})

describe('cards and payments balance checks', () => {
  const check = (iban: string, amount: number, currency = 'CZK') => ({ exchangeIdentification: 'X1', debtorAccount: { identification: { iban } }, transactionDetails: { currency, totalAmount: amount } })

  it('answers APPR or DECL against the real available balance', async () => {
    const aisp = await h.consent('AISP')
    const balances = (await h.api<{ balances: Array<{ type: { codeOrProprietary: { code: string } }; amount: { value: number } }> }>('GET', '/accounts/{id}/balance', `/accounts/${czk.id}/balance`, aisp.access_token)).body.balances
    const available = balances.find((b) => b.type.codeOrProprietary.code === 'CLAV')?.amount.value as number
    const cisp = await h.consent('CISP')
    const yes = await h.api('POST', '/accounts/balanceCheck', '/accounts/balanceCheck', cisp.access_token, { body: check(czk.iban, available) })
    expect(yes.body).toMatchObject({ response: 'APPR', exchangeIdentification: 'X1' })
    const no = await h.api('POST', '/accounts/balanceCheck', '/accounts/balanceCheck', cisp.access_token, { body: check(czk.iban, Math.round((available + 0.01) * 100) / 100) })
    expect(no.body).toMatchObject({ response: 'DECL' })
    const pisp = await h.consent('PISP')
    const viaPayments = await h.api('POST', '/payments/balanceCheck', '/payments/balanceCheck', pisp.access_token, { body: check(czk.iban, 1) })
    expect(viaPayments.body).toMatchObject({ response: 'APPR' })

    const other = (await h.users())[1]?.accounts[0]?.iban as string
    const foreign = await h.api('POST', '/accounts/balanceCheck', '/accounts/balanceCheck', cisp.access_token, { body: check(other, 1) })
    expect(foreign.status).toBe(403)
    expect(firstError(foreign.body)).toMatchObject({ error: 'AG01' })
    const unknown = await h.api('POST', '/accounts/balanceCheck', '/accounts/balanceCheck', cisp.access_token, { body: check('CZ6508000000192000145399', 1) })
    expect(firstError(unknown.body)).toMatchObject({ error: 'AC02' })
    const currency = await h.api('POST', '/accounts/balanceCheck', '/accounts/balanceCheck', cisp.access_token, { body: check(czk.iban, 1, 'EUR') })
    expect(firstError(currency.body)).toMatchObject({ error: 'AM11' })
    const missing = await h.api('POST', '/accounts/balanceCheck', '/accounts/balanceCheck', cisp.access_token, { body: { debtorAccount: { identification: { iban: czk.iban } } } })
    expect((missing.body as Errors).errors.map((e) => e.scope)).toEqual(['exchangeIdentification', 'transactionDetails.currency', 'transactionDetails.totalAmount'])
    const notJson = await h.api('POST', '/accounts/balanceCheck', '/accounts/balanceCheck', cisp.access_token, { headers: { 'content-type': 'text/plain' }, body: 'x' })
    expect(notJson.status).toBe(415)
  })
})

describe('payments interface', () => {
  const domestic = (id: string, extra: Record<string, unknown> = {}) => ({
    paymentIdentification: { instructionIdentification: id },
    amount: { instructedAmount: { value: 1250.5, currency: 'CZK' } },
    debtorAccount: { identification: { iban: czk.iban } },
    creditorAccount: { identification: { iban: 'CZ6508000000192000145399' } },
    creditor: { name: 'Jan Novak' },
    remittanceInformation: { unstructured: 'Faktura 2026-11', structured: { creditorReferenceInformation: { reference: ['VS:1234567890', 'KS:0308'] } } },
    ...extra,
  })

  it('creates, signs through the bank page, settles and books a payment; detail reads end with the authorization', async () => {
    const t = await h.consent('PISP')
    const created = await h.api<{ transaction: { identification: string }; paymentIdentification: { transactionIdentification: string }; signInfo: { signId: string; signID: string; state: string } }>(
      'POST',
      '/payments/',
      '/payments/',
      t.access_token,
      { body: domestic('PAY-1') },
    )
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ instructionStatus: 'ACTC', paymentKind: 'DOMESTIC', paymentTypeInformation: { instructionPriority: 'NORM', serviceLevel: { code: 'DMCT' } } })
    const id = created.body.transaction.identification
    expect(created.body.paymentIdentification.transactionIdentification).toBe(id)
    expect(created.body.signInfo.signID).toBe(created.body.signInfo.signId)
    const detail = await h.api('GET', '/payments/{paymentId}', `/payments/${id}`, t.access_token)
    expect(detail.status).toBe(200)

    const returnUrl = `${new URL(CLIENT.redirectUris[0] as string).origin}/payments/done?x=1`
    const wrongSign = await h.api('POST', '/payments/{paymentId}/sign/{signId}', `/payments/${id}/sign/nope`, t.access_token, { headers: { 'tpp-redirect-uri': returnUrl } })
    expect(firstError(wrongSign.body)).toMatchObject({ error: 'INCORRECT_SIGNID' })
    const noReturn = await h.api('POST', '/payments/{paymentId}/sign/{signId}', `/payments/${id}/sign/${created.body.signInfo.signId}`, t.access_token)
    expect(firstError(noReturn.body)).toMatchObject({ error: 'FIELD_MISSING', scope: 'TPP-Redirect-URI' })
    const elsewhere = await h.api('POST', '/payments/{paymentId}/sign/{signId}', `/payments/${id}/sign/${created.body.signInfo.signId}`, t.access_token, { headers: { 'tpp-redirect-uri': 'https://evil.example/x' } })
    expect(firstError(elsewhere.body)).toMatchObject({ error: 'FIELD_INVALID', scope: 'TPP-Redirect-URI' })
    const sign = await h.api<{ href: { url: string } }>('POST', '/payments/{paymentId}/sign/{signId}', `/payments/${id}/sign/${created.body.signInfo.signId}`, t.access_token, {
      headers: { 'tpp-redirect-uri': returnUrl },
      body: { authorizationType: 'USERAGENT_REDIRECT' },
    })
    expect(sign.status).toBe(200)
    const pagePath = new URL(sign.body.href.url).pathname
    expect((await h.raw('GET', pagePath)).body).toContain('1250.50 CZK')
    const wrongPassword = await h.raw('POST', pagePath, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=user1&password=bad&decision=authorize' })
    expect(wrongPassword.status).toBe(401)
    const done = await h.raw('POST', pagePath, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=user1&password=password1&decision=authorize' })
    expect(done.status).toBe(302)
    const back = new URL(done.headers.get('location') as string)
    expect(back.searchParams.get('paymentId')).toBe(id)
    expect(back.searchParams.get('x')).toBe('1')

    const gone = await h.api('GET', '/payments/{paymentId}', `/payments/${id}`, t.access_token)
    expect(gone.status).toBe(404)
    expect(firstError(gone.body)).toMatchObject({ error: 'TRANSACTION_MISSING', parameters: { REASON: 'AUTHORIZATION_COMPLETED' } })
    const signAgain = await h.api('POST', '/payments/{paymentId}/sign/{signId}', `/payments/${id}/sign/${created.body.signInfo.signId}`, t.access_token, { headers: { 'tpp-redirect-uri': returnUrl } })
    expect(firstError(signAgain.body)).toMatchObject({ error: 'AUTHORIZATION_COMPLETED' })
    expect((await h.api('GET', '/payments/{paymentId}/status', `/payments/${id}/status`, t.access_token)).body).toEqual({ instructionStatus: 'ACSP' })
    await h.advance('11m')
    expect((await h.api('GET', '/payments/{paymentId}/status', `/payments/${id}/status`, t.access_token)).body).toEqual({ instructionStatus: 'ACSC' })

    const aisp = await h.consent('AISP')
    const history = await h.api<{ transactions: Array<{ amount: { value: number }; creditDebitIndicator: string; entryDetails: { transactionDetails: { references: { instructionIdentification?: string } } } }> }>(
      'GET',
      '/accounts/{id}/transactions',
      `/accounts/${czk.id}/transactions?pageSize=100`,
      aisp.access_token,
    )
    const booked = history.body.transactions.find((x) => x.entryDetails.transactionDetails.references.instructionIdentification === 'PAY-1')
    expect(booked).toMatchObject({ amount: { value: 1250.5 }, creditDebitIndicator: 'DBIT', status: 'BOOK' })
    expect((await h.api('GET', '/payments/{paymentId}/status', '/payments/NOPE/status', t.access_token)).status).toBe(404)
  })

  it('refuses instant payments that fail a condition with NO_PART, and accepts a valid one that settles at once', async () => {
    const t = await h.consent('PISP')
    const inst = { paymentTypeInformation: { instructionPriority: 'INST' } }
    const tooMuch = await h.api('POST', '/payments/', '/payments/', t.access_token, { body: domestic('INST-1', { ...inst, amount: { instructedAmount: { value: 400000.01, currency: 'CZK' } } }) })
    expect(tooMuch.status).toBe(400)
    expect(firstError(tooMuch.body)).toMatchObject({ error: 'NO_PART', parameters: { REASON: 'AMOUNT_ABOVE_LIMIT', LIMIT: '400000', CURRENCY: 'CZK' } })
    const clock = (await h.admin<{ bankDate: string }>('GET', '/clock')).body
    const tomorrow = new Date(Date.parse(`${clock.bankDate}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
    const future = await h.api('POST', '/payments/', '/payments/', t.access_token, { body: domestic('INST-2', { ...inst, requestedExecutionDate: tomorrow }) })
    expect(firstError(future.body)).toMatchObject({ error: 'NO_PART', parameters: { REASON: 'FUTURE_DATED' } })
    const notReachable = await h.api('POST', '/payments/', '/payments/', t.access_token, { body: domestic('INST-3', { ...inst, creditorAccount: { identification: { other: { identification: '2000145399/2060' } } } }) })
    expect(firstError(notReachable.body)).toMatchObject({ error: 'NO_PART', parameters: { REASON: 'CREDITOR_BANK_NOT_REACHABLE' } })
    const fromEur = await h.api('POST', '/payments/', '/payments/', t.access_token, {
      body: domestic('INST-4', { ...inst, debtorAccount: { identification: { iban: eur.iban } }, amount: { instructedAmount: { value: 10, currency: 'EUR' } } }),
    })
    expect((fromEur.body as Errors).errors.map((e) => e.parameters?.REASON)).toContain('DEBTOR_CURRENCY_NOT_CZK')

    const ok = await h.api<{ transaction: { identification: string } }>('POST', '/payments/', '/payments/', t.access_token, { body: domestic('INST-5', inst) })
    expect(ok.status).toBe(201)
    await h.admin('POST', '/authorizations', { paymentId: ok.body.transaction.identification })
    expect((await h.api('GET', '/payments/{paymentId}/status', `/payments/${ok.body.transaction.identification}/status`, t.access_token)).body).toEqual({ instructionStatus: 'ACSC' })
  })

  it('rejects a payment the user cancels (DS02) and one the balance no longer covers at settlement (AM04)', async () => {
    const t = await h.consent('PISP')
    const cancelled = await h.api<{ transaction: { identification: string }; signInfo: { signId: string } }>('POST', '/payments/', '/payments/', t.access_token, { body: domestic('RJ-1') })
    const id = cancelled.body.transaction.identification
    const sign = await h.api<{ href: { url: string } }>('POST', '/payments/{paymentId}/sign/{signId}', `/payments/${id}/sign/${cancelled.body.signInfo.signId}`, t.access_token, {
      headers: { 'tpp-redirect-uri': `${new URL(CLIENT.redirectUris[0] as string).origin}/back` },
    })
    const back = await h.raw('POST', new URL(sign.body.href.url).pathname, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=cancel' })
    expect(new URL(back.headers.get('location') as string).searchParams.get('paymentId')).toBe(id)
    expect((await h.api('GET', '/payments/{paymentId}/status', `/payments/${id}/status`, t.access_token)).body).toEqual({ instructionStatus: 'RJCT', statusReason: { code: 'DS02', message: expect.any(String) } })

    // The balance check says yes, then a large debit books before the payment settles.
    const small = { exchangeIdentification: 'B1', debtorAccount: { identification: { iban: czk.iban } }, transactionDetails: { currency: 'CZK', totalAmount: 100 } }
    expect((await h.api('POST', '/payments/balanceCheck', '/payments/balanceCheck', t.access_token, { body: small })).body).toMatchObject({ response: 'APPR' })
    const late = await h.api<{ transaction: { identification: string } }>('POST', '/payments/', '/payments/', t.access_token, { body: domestic('RJ-2', { amount: { instructedAmount: { value: 100, currency: 'CZK' } } }) })
    await h.admin('POST', '/authorizations', { paymentId: late.body.transaction.identification })
    expect((await h.api('GET', '/payments/{paymentId}/status', `/payments/${late.body.transaction.identification}/status`, t.access_token)).body).toEqual({ instructionStatus: 'ACSP' })
    await h.admin('POST', '/transactions', { accountId: czk.id, transactions: [{ type: 'TRANSFER', amount: 50_000_000, creditDebitIndicator: 'DBIT', counterparty: { name: 'Big Purchase' } }] })
    expect((await h.api('POST', '/payments/balanceCheck', '/payments/balanceCheck', t.access_token, { body: small })).body).toMatchObject({ response: 'DECL' })
    await h.advance('11m')
    const status = await h.api<{ instructionStatus: string; statusReason: { code: string } }>('GET', '/payments/{paymentId}/status', `/payments/${late.body.transaction.identification}/status`, t.access_token)
    expect(status.body).toMatchObject({ instructionStatus: 'RJCT', statusReason: { code: 'AM04' } })
    await h.admin('POST', '/transactions', { accountId: czk.id, transactions: [{ type: 'TRANSFER', amount: 50_000_000, creditDebitIndicator: 'CRDT', counterparty: { name: 'Refund' } }] })
  })

  it('classifies SEPA and foreign payments and refuses bad requests with COBS codes', async () => {
    const t = await h.consent('PISP')
    const sepa = await h.api('POST', '/payments/', '/payments/', t.access_token, {
      body: {
        paymentIdentification: { instructionIdentification: 'SEPA-1', endToEndIdentification: 'E2E-1' },
        amount: { instructedAmount: { value: 20, currency: 'EUR' } },
        debtorAccount: { identification: { iban: eur.iban } },
        creditorAccount: { identification: { iban: 'DE89370400440532013000' } },
        creditor: { name: 'Max Mustermann' },
      },
    })
    expect(sepa.body).toMatchObject({ paymentKind: 'SEPA', paymentTypeInformation: { serviceLevel: { code: 'ESCT' } } })
    const foreignNoBic = await h.api('POST', '/payments/', '/payments/', t.access_token, {
      body: { paymentIdentification: { instructionIdentification: 'F-1' }, amount: { instructedAmount: { value: 20, currency: 'EUR' } }, debtorAccount: { identification: { iban: eur.iban } }, creditorAccount: { identification: { iban: 'DE89370400440532013000' } }, creditor: { name: 'Max' } },
    })
    expect(firstError(foreignNoBic.body)).toMatchObject({ error: 'FIELD_MISSING', scope: 'creditorAgent.financialInstitutionIdentification.bic' })

    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ debtorAccount: { identification: { iban: 'CZ6508000000192000145399' } } }, 400, 'AC02'],
      [{ debtorAccount: { identification: { iban: card.iban } } }, 400, 'AC12'],
      [{ debtorAccount: { identification: { iban: czk.iban }, currency: 'EUR' } }, 400, 'AC10'],
      [{ amount: { instructedAmount: { value: 1, currency: 'EUR' } } }, 400, 'AM11'],
      [{ amount: { instructedAmount: { value: 1.005, currency: 'CZK' } } }, 400, 'AM12'],
      [{ creditorAccount: { identification: { iban: czk.iban } } }, 400, 'REC_SEND'],
      [{ creditorAccount: { identification: { other: { identification: '2000145399/9999' } } } }, 400, 'RC10'],
      [{ creditor: { name: 'Jiří Novák' } }, 400, 'RR10'],
      [{ requestedExecutionDate: '2020-01-01' }, 400, 'DT01'],
      [{ paymentIdentification: {} }, 400, 'FIELD_MISSING'],
    ]
    for (const [i, [patch, status, code]] of cases.entries()) {
      const answer = await h.api('POST', '/payments/', '/payments/', t.access_token, { body: domestic(`BAD-${i}`, patch) })
      expect({ i, status: answer.status, code: firstError(answer.body)?.error }).toEqual({ i, status, code })
    }
    const other = (await h.users())[1]?.accounts[0]?.iban as string
    const notMine = await h.api('POST', '/payments/', '/payments/', t.access_token, { body: domestic('BAD-X', { debtorAccount: { identification: { iban: other } } }) })
    expect(notMine.status).toBe(403)
    const duplicate = await h.api('POST', '/payments/', '/payments/', t.access_token, { body: domestic('SEPA-1') })
    expect(firstError(duplicate.body)).toMatchObject({ error: 'RF01' })
    const broken = await h.raw('POST', '/payments/', { headers: { 'content-type': 'application/json', authorization: `Bearer ${t.access_token}`, 'x-request-id': 'r', 'x-ibm-client-id': CLIENT.clientId }, body: '{"a":' })
    contract.check('POST', '/payments/', broken, broken.body)
    // The description writes `POST /payments/`: without the slash there is no such operation (as at a
    // strict gateway), and the payment is not created.
    const noSlash = await h.raw('POST', '/payments', { headers: { 'content-type': 'application/json', authorization: `Bearer ${t.access_token}`, 'x-request-id': 'r', 'x-ibm-client-id': CLIENT.clientId }, body: JSON.stringify(domestic('NO-SLASH-1')) })
    expect(noSlash.status).toBe(404)
    expect(JSON.stringify(noSlash.body)).toContain('no operation POST /payments')
    const withSlash = await h.raw('POST', '/payments/', { headers: { 'content-type': 'application/json', authorization: `Bearer ${t.access_token}`, 'x-request-id': 'r', 'x-ibm-client-id': CLIENT.clientId }, body: JSON.stringify(domestic('NO-SLASH-1')) })
    expect(withSlash.status).toBe(201)
    expect(firstError(broken.body)).toMatchObject({ error: 'FF01' })
    const overLimit = await h.api('POST', '/payments/', '/payments/', t.access_token, { body: domestic('LIMIT-1', { amount: { instructedAmount: { value: 500000.01, currency: 'CZK' } } }) })
    expect(firstError(overLimit.body)).toMatchObject({ error: 'AM02', parameters: { LIMIT: 'DAILY' } })
  })
})

describe('standing orders', () => {
  const order = (id: string, extra: Record<string, unknown> = {}) => ({
    standingOrderIdentification: { instructionIdentification: id },
    amount: { instructedAmount: { value: 500, currency: 'CZK' } },
    requestedExecutionDate: (extra.requestedExecutionDate as string | undefined) ?? '2099-01-31',
    standingOrder: { alias: 'ignored', execution: { interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION', modeDue: 'DUE_DAY_OF_MONTH', intervalDue: '3' }, validity: { maxIterations: 4 } },
    debtorAccount: { identification: { iban: czk.iban } },
    creditorAccount: { identification: { other: { identification: '19-2000145399/0800' } } },
    creditor: { name: 'Landlord' },
    ...extra,
  })

  it('creates, authorizes, executes, changes and deletes a standing order with a signing round each', async () => {
    const t = await h.consent('PISP')
    const clock = (await h.admin<{ bankDate: string }>('GET', '/clock')).body
    const created = await h.api<{ standingOrderIdentification: { transactionIdentification: string }; signInfo: { signId: string } }>('POST', '/standingorders', '/standingorders', t.access_token, {
      body: order('SO-1', { requestedExecutionDate: clock.bankDate }),
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ instructionStatus: 'ACTC', signInfo: { state: 'OPEN' } })
    expect(JSON.stringify(created.body)).not.toContain('ignored')
    const id = created.body.standingOrderIdentification.transactionIdentification
    const returnUrl = `${new URL(CLIENT.redirectUris[0] as string).origin}/so`
    const sign = await h.api<{ href: { url: string } }>('POST', '/standingorders/{standingOrderId}/sign/{signId}', `/standingorders/${id}/sign/${created.body.signInfo.signId}`, t.access_token, {
      headers: { 'tpp-redirect-uri': returnUrl },
    })
    const done = await h.raw('POST', new URL(sign.body.href.url).pathname, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=user1&password=password1&decision=authorize' })
    expect(new URL(done.headers.get('location') as string).searchParams.get('standingOrderId')).toBe(id)
    const status = await h.api<{ instructionStatus: string; realizedPayments: unknown[] }>('GET', '/standingorders/{standingOrderId}/status', `/standingorders/${id}/status`, t.access_token)
    expect(status.body.instructionStatus).toBe('ACSP')
    expect(status.body.realizedPayments).toHaveLength(1)

    const put = await h.api<{ signInfo: { signId: string }; pendingChange: string; amount: { instructedAmount: { value: number } } }>('PUT', '/standingorders/{standingOrderId}', `/standingorders/${id}`, t.access_token, {
      body: order('SO-1', { requestedExecutionDate: clock.bankDate, amount: { instructedAmount: { value: 750, currency: 'CZK' } } }),
    })
    expect(put.status).toBe(200)
    expect(put.body.pendingChange).toBe('UPDATE')
    expect(put.body.amount.instructedAmount.value).toBe(500)
    expect(put.body.signInfo.signId).not.toBe(created.body.signInfo.signId)
    await h.admin('POST', '/authorizations', { standingOrderId: id })
    const updated = await h.api<{ amount: { instructedAmount: { value: number } } }>('GET', '/standingorders/{standingOrderId}', `/standingorders/${id}`, t.access_token)
    expect(updated.body.amount.instructedAmount.value).toBe(750)

    await h.advance('32d')
    const expired = await h.api('GET', '/standingorders/{standingOrderId}/status', `/standingorders/${id}/status`, t.access_token)
    expect(firstError(expired.body)?.parameters).toEqual({ REASON: 'TOKEN_EXPIRED' })
    // A payments consent does not expire: its refresh token still works after a month.
    const t2 = (await h.refresh(t.refresh_token)).body as { access_token: string }
    const later = await h.api<{ realizedPayments: Array<{ amount: { value: number } }> }>('GET', '/standingorders/{standingOrderId}/status', `/standingorders/${id}/status`, t2.access_token)
    expect(later.body.realizedPayments.map((p) => p.amount.value)).toEqual([500, 750])

    const del = await h.api<{ pendingChange: string; signInfo: { signId: string } }>('DELETE', '/standingorders/{standingOrderId}', `/standingorders/${id}`, t2.access_token)
    expect(del.body.pendingChange).toBe('DELETE')
    const delSign = await h.api<{ href: { url: string } }>('POST', '/standingorders/{standingOrderId}/sign/{signId}', `/standingorders/${id}/sign/${del.body.signInfo.signId}`, t2.access_token, { headers: { 'tpp-redirect-uri': returnUrl } })
    await h.raw('POST', new URL(delSign.body.href.url).pathname, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=user1&password=password1&decision=authorize' })
    expect((await h.api('GET', '/standingorders/{standingOrderId}', `/standingorders/${id}`, t2.access_token)).status).toBe(404)
    expect((await h.api('GET', '/standingorders/{standingOrderId}/status', `/standingorders/${id}/status`, t2.access_token)).body).toMatchObject({ instructionStatus: 'CANC' })
  })

  it('finishes an UNTIL_DATE order after its last execution and drops it from the active list', async () => {
    const t = await h.consent('PISP')
    const clock = (await h.admin<{ bankDate: string }>('GET', '/clock')).body
    const last = new Date(Date.parse(`${clock.bankDate}T00:00:00Z`) + 10 * 86_400_000).toISOString().slice(0, 10)
    const created = await h.api<{ standingOrderIdentification: { transactionIdentification: string } }>('POST', '/standingorders', '/standingorders', t.access_token, {
      body: order('SO-UNTIL', { requestedExecutionDate: clock.bankDate, standingOrder: { execution: { interval: 'MONTHLY', mode: 'UNTIL_DATE' }, validity: { lastExecutionDate: last } } }),
    })
    const id = created.body.standingOrderIdentification.transactionIdentification
    await h.admin('POST', '/authorizations', { standingOrderId: id })
    const status = await h.api<{ instructionStatus: string; realizedPayments: Array<{ date: string }> }>('GET', '/standingorders/{standingOrderId}/status', `/standingorders/${id}/status`, t.access_token)
    expect(status.body.instructionStatus).toBe('ACSC')
    expect(status.body.realizedPayments.map((p) => p.date)).toEqual([clock.bankDate])
    const aisp = await h.consent('AISP')
    const list = await h.api<{ standingOrders: Array<{ standingOrderIdentification: { transactionIdentification: string } }> }>('GET', '/standingorders', '/standingorders', aisp.access_token)
    expect(list.body.standingOrders.map((o) => o.standingOrderIdentification.transactionIdentification)).not.toContain(id)
  })

  it('enforces the parameter table', async () => {
    const t = await h.consent('PISP')
    const exec = (execution: Record<string, unknown>, validity?: Record<string, unknown>) => order('SO-BAD', { standingOrder: { execution, ...(validity ? { validity } : {}) } })
    const daily = await h.api('POST', '/standingorders', '/standingorders', t.access_token, { body: exec({ interval: 'DAILY', mode: 'UNTIL_CANCELLATION' }) })
    expect(firstError(daily.body)).toMatchObject({ error: 'FIELD_INVALID', scope: 'standingOrder.execution.interval' })
    const lastWithoutDate = await h.api('POST', '/standingorders', '/standingorders', t.access_token, { body: exec({ interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION' }, { lastExecutionDate: '2099-12-31' }) })
    expect(firstError(lastWithoutDate.body)).toMatchObject({ error: 'FIELD_INVALID', scope: 'standingOrder.validity.lastExecutionDate' })
    const eurOrder = await h.api('POST', '/standingorders', '/standingorders', t.access_token, { body: order('SO-EUR', { debtorAccount: { identification: { iban: eur.iban } }, amount: { instructedAmount: { value: 5, currency: 'EUR' } } }) })
    expect(firstError(eurOrder.body)).toMatchObject({ error: 'AM11' })
    const untilDate = await h.api('POST', '/standingorders', '/standingorders', t.access_token, { body: exec({ interval: 'QUARTERLY', mode: 'UNTIL_DATE' }, { lastExecutionDate: '2099-12-31' }) })
    expect(untilDate.status).toBe(201)
    const aisp = await h.consent('AISP')
    const id = (untilDate.body as { standingOrderIdentification: { transactionIdentification: string } }).standingOrderIdentification.transactionIdentification
    // Not authorized yet: invisible to the accounts interface, visible to its creator.
    expect((await h.api('GET', '/standingorders/{standingOrderId}', `/standingorders/${id}`, aisp.access_token)).status).toBe(404)
    const removed = await h.api('DELETE', '/standingorders/{standingOrderId}', `/standingorders/${id}`, t.access_token)
    expect(removed.body).toMatchObject({ instructionStatus: 'CANC' })
  })
})

describe('fault injection', () => {
  it('answers 429 with Retry-After and 503 on demand, for the next N requests only', async () => {
    const t = await h.consent('AISP')
    await h.admin('PUT', '/faults', { throttleRate: 1, retryAfterSeconds: 7, count: 1 })
    const throttled = await h.api('GET', '/accounts', '/accounts', t.access_token)
    expect(throttled.status).toBe(429)
    expect(throttled.headers.get('retry-after')).toBe('7')
    await h.admin('PUT', '/faults', { errorRate: 1, errorStatus: 503, count: 1, pathPrefix: '/accounts' })
    expect((await h.api('GET', '/accounts', '/accounts', t.access_token)).status).toBe(503)
    expect((await h.api('GET', '/accounts', '/accounts', t.access_token)).status).toBe(200)
    await h.admin('PUT', '/faults', { resetRate: 1, count: 1 })
    await expect(fetch(`${sim.url}/accounts`)).rejects.toThrow()
    expect((await h.api('GET', '/accounts', '/accounts', t.access_token)).status).toBe(200)
    const stats = (await h.admin<{ faultsInjected: Record<string, number> }>('GET', '/stats')).body
    expect(stats.faultsInjected).toMatchObject({ throttle: 1, error: 1, reset: 1 })
  })
})

describe('reset', () => {
  it('forgets tokens, payments and injected entries and puts the clock back', async () => {
    const t = await h.consent('AISP')
    await h.advance('2d')
    const before = (await h.admin<{ offsetMs: number }>('GET', '/clock')).body.offsetMs
    expect(before).toBeGreaterThan(0)
    await h.admin('PUT', '/faults', { latencyMs: 1 })
    expect((await h.admin('POST', '/reset')).status).toBe(200)
    expect((await h.admin<{ offsetMs: number }>('GET', '/clock')).body.offsetMs).toBe(0)
    expect((await h.admin<{ faults: Record<string, unknown> }>('GET', '/faults')).body.faults).toEqual({})
    const gone = await h.api('GET', '/accounts', '/accounts', t.access_token)
    expect(firstError(gone.body)?.parameters).toEqual({ REASON: 'TOKEN_UNKNOWN' })
  })
})

describe('admin API', () => {
  it('answers as its OpenAPI document says, errors included', async () => {
    for (const [method, path, body] of [
      ['GET', '/consents', undefined],
      ['GET', '/faults', undefined],
      ['DELETE', '/faults', undefined],
      ['GET', '/rate-limit', undefined],
      ['GET', '/stats', undefined],
    ] as const) {
      expect((await h.admin(method, path, body)).status).toBe(200)
    }
    expect((await h.admin('POST', '/consents', { username: 'nobody', scope: 'AISP' })).status).toBe(400)
    expect((await h.admin('POST', '/consents', { username: 'user1', scope: 'AISP', accountIds: ['not-mine'] })).status).toBe(400)
    expect((await h.admin('POST', '/clock', { advance: 'soon' })).status).toBe(400)
    expect((await h.admin('POST', '/clock', { set: '2000-01-01T00:00:00Z' })).status).toBe(400)
    const offset = (await h.admin<{ offsetMs: number }>('GET', '/clock')).body.offsetMs
    expect((await h.admin<{ offsetMs: number }>('POST', '/clock', { offsetMs: offset + 1000 })).body.offsetMs).toBe(offset + 1000)
    expect((await h.admin('POST', '/clock', { offsetMs: offset })).status).toBe(400)
    expect((await h.admin('PUT', '/faults', { errorRate: 2 })).status).toBe(400)
    expect((await h.admin('PUT', '/faults', { colour: 'red' })).status).toBe(400)
    expect((await h.admin('PUT', '/rate-limit', { authorizationPerHour: 0 })).status).toBe(400)
    expect((await h.admin('POST', '/transactions', { accountId: 'nope', transactions: [{ amount: 1 }] })).status).toBe(400)
    expect((await h.admin('POST', '/authorizations', {})).status).toBe(400)
    expect((await h.admin('POST', '/revoke', { consentId: 'nope' })).status).toBe(400)
  })
})

describe('coverage', () => {
  it('exercised every operation of the document', () => {
    const operations = Object.entries(contract.doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
      Object.keys(item)
        .filter((m) => ['get', 'post', 'put', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${p}`),
    )
    const seenOps = new Set([...contract.seen].map((s) => s.split(' ').slice(0, 2).join(' ')))
    expect(operations.filter((op) => !seenOps.has(op))).toEqual([])
    const adminOperations = Object.entries(adminContract.doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`))
    const seenAdmin = new Set([...adminContract.seen].map((s) => s.split(' ').slice(0, 2).join(' ')))
    expect(adminOperations.filter((op) => !seenAdmin.has(op))).toEqual([])
  })
})
