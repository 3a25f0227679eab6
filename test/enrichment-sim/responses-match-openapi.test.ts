import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEnrichmentSim } from '@tep/enrichment-sim'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { admin, bearer, call, loadOpenApi, samples, token } from './sim-test-kit.ts'
import type { OpenApiDoc, RawRequest, RawResponse, Sample } from './sim-test-kit.ts'

/**
 * Every operation and every status the OpenAPI document lists is produced by its
 * real cause (bad input, missing token, wrong method, injected fault, ...) and the
 * answer is checked against the document: status, body schema, required headers.
 * The last test proves that nothing documented was left out.
 */

const { doc, ajv } = loadOpenApi()

interface Operation {
  id: string
  method: string
  template: string
  responses: Record<string, OpenApiDoc>
}

const operations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, OpenApiDoc>>).flatMap(([template, item]) =>
  Object.entries(item).map(([method, op]) => ({ id: op.operationId as string, method: method.toUpperCase(), template, responses: op.responses })),
)
const byId = new Map(operations.map((op) => [op.id, op]))
const reached = new Set<string>()

function pointer(text: string): string {
  return text.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** Checks a response against the operation's documented answer for its status, and records the pair. */
function expectDocumented(operationId: string, res: RawResponse, expectedStatus: number): void {
  const op = byId.get(operationId)
  if (op === undefined) throw new Error(`no operation ${operationId} in the OpenAPI document`)
  expect(res.status, `${operationId}: ${JSON.stringify(res.body)}`).toBe(expectedStatus)
  const documented = op.responses[String(res.status)]
  expect(documented, `${operationId} does not document status ${res.status}`).toBeDefined()
  const ref = documented.$ref as string | undefined
  const response = ref === undefined ? documented : doc.components.responses[ref.split('/').pop() as string]
  const base = ref === undefined ? `openapi#/paths/${pointer(op.template)}/${op.method.toLowerCase()}/responses/${res.status}` : `openapi#/components/responses/${ref.split('/').pop()}`
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/)
  const validate = ajv.getSchema(`${base}/content/application~1json/schema`) ?? ajv.compile({ $ref: `${base}/content/application~1json/schema` })
  const valid = validate(res.body)
  expect(valid, `${operationId} ${res.status} body ${JSON.stringify(res.body).slice(0, 500)}: ${ajv.errorsText(validate.errors)}`).toBe(true)
  for (const [name, header] of Object.entries<OpenApiDoc>(response.headers ?? {})) {
    if (header.required === true) expect(res.headers[name.toLowerCase()], `${operationId} ${res.status} needs header ${name}`).toBeDefined()
    if (res.headers[name.toLowerCase()] !== undefined && header.schema?.pattern !== undefined) expect(String(res.headers[name.toLowerCase()])).toMatch(new RegExp(header.schema.pattern))
  }
  reached.add(`${operationId} ${res.status}`)
}

let sim: EnrichmentSim
let full: string
let limited: string
let feedbackOnly: string
let card: Sample
let cardNotFound: Sample
let cardInvalid: Sample
const transfer = new Map<string, Sample>()

beforeAll(async () => {
  sim = await startEnrichmentSim({
    seed: 11,
    shops: 3_000,
    merchants: 300,
    credentials: {
      clients: [
        { id: 'sim-client', secret: 'sim-secret', scopes: ['find', 'read', 'invalidations', 'suggestions'] },
        { id: 'sim-limited', secret: 'sim-limited-secret', scopes: ['find', 'read'] },
        // Holds no lookup or read right: the cause of 403 on those operations.
        { id: 'feedback-only', secret: 'feedback-secret', scopes: ['suggestions'] },
      ],
      basicUsers: [{ user: 'sim-user', password: 'sim-password', scopes: ['find', 'read', 'invalidations', 'suggestions'] }],
    },
  })
  full = await token(sim)
  limited = await token(sim, 'sim-limited', 'sim-limited-secret')
  feedbackOnly = await token(sim, 'feedback-only', 'feedback-secret')
  ;[card] = (await samples(sim, { count: 1, kind: 'card', outcome: 'found' })) as [Sample]
  ;[cardNotFound] = (await samples(sim, { count: 1, kind: 'card', outcome: 'notFound' })) as [Sample]
  ;[cardInvalid] = (await samples(sim, { count: 1, kind: 'card', outcome: 'invalid' })) as [Sample]
  for (const sample of await samples(sim, { count: 300, kind: 'transfer', outcome: 'found' })) if (!transfer.has(sample.operation)) transfer.set(sample.operation, sample)
  expect([...transfer.keys()].sort()).toEqual(['findByBankTransfer/certis', 'findByBankTransfer/sepa', 'findByBankTransfer/uk'])
  await admin(sim, 'POST', '/__admin/mutations', { kind: 'random', count: 12 })
})

afterAll(async () => {
  await sim?.close()
})

const TOKEN_PATH = '/auth/protocol/openid-connect/token'
const form = (fields: Record<string, string>): RawRequest => ({ method: 'POST', path: TOKEN_PATH, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
const json = (path: string, accessToken: string, body: unknown): RawRequest => ({ method: 'POST', path, headers: bearer(accessToken, { 'content-type': 'application/json' }), body: JSON.stringify(body) })

/** A request each operation answers with success (or 501 for the variants that are not offered). */
function validRequest(operationId: string, accessToken: string): RawRequest {
  const get = (path: string, query: Record<string, string> = {}): RawRequest => ({ path, query, headers: bearer(accessToken) })
  switch (operationId) {
    case 'getToken':
      return form({ grant_type: 'client_credentials', client_id: 'sim-client', client_secret: 'sim-secret' })
    case 'findByCardTransaction':
      return get('/v5/shops/findByCardTransaction', card.input)
    case 'findByCardTransactionPost':
      return json('/v5/shops/findByCardTransaction', accessToken, card.input)
    case 'findByCardTransactionBatch':
      return json('/v5/shops/findByCardTransactionBatch', accessToken, { requests: [card.input, cardNotFound.input, cardInvalid.input] })
    case 'completeFindByCardTransaction':
      return get('/v5/shops/complete/findByCardTransaction', card.input)
    case 'completeFindByCardTransactionPost':
      return json('/v5/shops/complete/findByCardTransaction', accessToken, card.input)
    case 'completeFindByCardTransactionBatch':
      return json('/v5/shops/complete/findByCardTransactionBatch', accessToken, { requests: [card.input, cardNotFound.input, cardInvalid.input] })
    case 'findByBankTransferCertis':
      return get('/v5/shops/findByBankTransfer/certis', transfer.get('findByBankTransfer/certis')?.input)
    case 'findByBankTransferSepa':
      return get('/v5/shops/findByBankTransfer/sepa', transfer.get('findByBankTransfer/sepa')?.input)
    case 'findByBankTransferUk':
      return get('/v5/shops/findByBankTransfer/uk', transfer.get('findByBankTransfer/uk')?.input)
    case 'findByBankTransferJopacc':
      return get('/v5/shops/findByBankTransfer/jopacc', { iban: 'JO94CBJO0010000000000131000302' })
    case 'findByBankTransferP2p':
      return get('/v5/shops/findByBankTransfer/p2p', { iban: 'CZ6508000000192000145399' })
    case 'findByOpenDataTransaction':
      return json('/v5/shops/findByOpenDataTransaction', accessToken, { data: { description: 'TESCO' }, bank: 'lloyds', source: 'ob', refresh: 'false' })
    case 'getShop':
      return get(`/v5/shops/${card.expected.shopUid}`)
    case 'getMerchant':
      return get(`/v5/merchants/${encodeURIComponent(card.expected.merchantUid as string)}`)
    case 'getInvalidations':
      return get('/v5/invalidations', { fromId: '0', pageSize: '5' })
    case 'getInvalidationItemRange':
      return get('/v5/invalidations/item/range', { from: '2000-01-01T00:00:00Z' })
    case 'postSuggestion':
      return json('/v5/suggestions', accessToken, { current: { shopUid: card.expected.shopUid }, suggestion: 'The logo is outdated', source: 'partner' })
    default:
      throw new Error(`no valid request for ${operationId}`)
  }
}

/** Invalid input per operation (400). */
function badRequest(operationId: string): RawRequest {
  const get = (path: string, query: Record<string, string>): RawRequest => ({ path, query, headers: bearer(full) })
  switch (operationId) {
    case 'getToken':
      return form({ client_id: 'sim-client', client_secret: 'sim-secret' })
    case 'findByCardTransaction':
      return get('/v5/shops/findByCardTransaction', { ...card.input, mcc: '54A1' })
    case 'completeFindByCardTransaction':
      return get('/v5/shops/complete/findByCardTransaction', { ...card.input, country: 'CZE' })
    case 'findByCardTransactionPost':
      return json('/v5/shops/findByCardTransaction', full, { amount: '1.00' })
    case 'completeFindByCardTransactionPost':
      return json('/v5/shops/complete/findByCardTransaction', full, { terminalId: 12345678 })
    case 'findByCardTransactionBatch':
      return json('/v5/shops/findByCardTransactionBatch', full, { requests: [] })
    case 'completeFindByCardTransactionBatch':
      return json('/v5/shops/complete/findByCardTransactionBatch', full, { requests: Array.from({ length: 501 }, () => card.input) })
    case 'findByBankTransferCertis':
      return get('/v5/shops/findByBankTransfer/certis', { accountNumber: '19', bankCode: '08' })
    case 'findByBankTransferSepa':
      return get('/v5/shops/findByBankTransfer/sepa', { iban: 'CZ0008000000001234567899' })
    case 'findByBankTransferUk':
      return get('/v5/shops/findByBankTransfer/uk', { sortCode: '12345', accountNumber: '12345678' })
    case 'getInvalidations':
      return get('/v5/invalidations', { pageSize: '1001' })
    case 'getInvalidationItemRange':
      return get('/v5/invalidations/item/range', { from: 'last tuesday' })
    case 'postSuggestion':
      return json('/v5/suggestions', full, { suggestion: 'x', source: 'user' })
    default: {
      // No input to get wrong: the missing Accept header is the cause.
      const request = validRequest(operationId, full)
      const headers = { ...request.headers }
      delete headers.accept
      return { ...request, headers }
    }
  }
}

function requiredScope(operationId: string): 'find' | 'read' | 'invalidations' | 'suggestions' {
  if (operationId === 'getShop' || operationId === 'getMerchant') return 'read'
  if (operationId.startsWith('getInvalidation')) return 'invalidations'
  if (operationId === 'postSuggestion') return 'suggestions'
  return 'find'
}

const apiOperations = operations.filter((op) => op.id !== 'getToken')

describe('every operation answers as documented', () => {
  it.each(operations.map((op) => op.id))('%s: success', async (operationId) => {
    const res = await call(sim, validRequest(operationId, full))
    const success = Object.keys(byId.get(operationId)?.responses ?? {}).find((s) => s.startsWith('2')) ?? '501'
    expectDocumented(operationId, res, Number(success))
  })

  it.each(operations.map((op) => op.id))('%s: 400 for bad input', async (operationId) => {
    const res = await call(sim, badRequest(operationId))
    expectDocumented(operationId, res, 400)
    if (operationId !== 'getToken') expect((res.body as { error: { message: string } }).error.message.length).toBeGreaterThan(10)
  })

  it.each(apiOperations.map((op) => op.id))('%s: 401 without credentials, with a bad token and with bad Basic credentials', async (operationId) => {
    const request = validRequest(operationId, full)
    const { authorization: _dropped, ...headers } = request.headers ?? {}
    const missing = await call(sim, { ...request, headers })
    expectDocumented(operationId, missing, 401)
    expect(missing.headers['www-authenticate']).toBeDefined()
    const forged = await call(sim, { ...request, headers: { ...headers, authorization: `Bearer ${full.slice(0, -4)}AAAA` } })
    expectDocumented(operationId, forged, 401)
    expect((forged.body as { error: { code: string } }).error.code).toBe('INVALID_TOKEN')
    const basic = await call(sim, { ...request, headers: { ...headers, authorization: `Basic ${Buffer.from('sim-user:wrong').toString('base64')}` } })
    expectDocumented(operationId, basic, 401)
  })

  it('getToken: 401 invalid_client for a wrong secret, in the body or as HTTP Basic', async () => {
    expectDocumented('getToken', await call(sim, form({ grant_type: 'client_credentials', client_id: 'sim-client', client_secret: 'nope' })), 401)
    const viaBasic = await call(sim, { ...form({ grant_type: 'client_credentials' }), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('sim-client:nope').toString('base64')}` } })
    expectDocumented('getToken', viaBasic, 401)
    expect(viaBasic.body).toMatchObject({ error: 'invalid_client' })
    expect(viaBasic.headers['www-authenticate']).toMatch(/^Basic/)
    const okViaBasic = await call(sim, { ...form({ grant_type: 'client_credentials' }), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('sim-client:sim-secret').toString('base64')}` } })
    expectDocumented('getToken', okViaBasic, 200)
    expect(await call(sim, form({ grant_type: 'password', client_id: 'sim-client', client_secret: 'sim-secret' }))).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } })
    const malformed = await call(sim, { ...form({ grant_type: 'client_credentials' }), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('sim%ZZclient:x').toString('base64')}` } })
    expectDocumented('getToken', malformed, 401)
  })

  it.each(apiOperations.filter((op) => '403' in op.responses).map((op) => op.id))('%s: 403 for a valid credential without the right', async (operationId) => {
    const scope = requiredScope(operationId)
    const lacking = scope === 'find' || scope === 'read' ? feedbackOnly : limited
    const res = await call(sim, validRequest(operationId, lacking))
    expectDocumented(operationId, res, 403)
    expect((res.body as { error: { code: string } }).error.code).toBe('INSUFFICIENT_SCOPE')
  })

  it('getShop and getMerchant: 404 for unknown and deleted entities; a handle reads the shop', async () => {
    expectDocumented('getShop', await call(sim, { path: '/v5/shops/doesNotExist0000000000', headers: bearer(full) }), 404)
    expectDocumented('getMerchant', await call(sim, { path: '/v5/merchants/doesNotExist0000000000@cz', headers: bearer(full) }), 404)
    const byHandle = await call(sim, { path: `/v5/shops/${card.expected.handle}`, headers: bearer(full) })
    expectDocumented('getShop', byHandle, 200)
    expect(byHandle.body).toMatchObject({ uid: card.expected.shopUid })
    const [victim] = (await samples(sim, { count: 1, kind: 'card', outcome: 'found', seed: 99 })) as [Sample]
    await admin(sim, 'POST', '/__admin/mutations', { kind: 'deleteShop', shopUid: victim.expected.shopUid })
    expectDocumented('getShop', await call(sim, { path: `/v5/shops/${victim.expected.shopUid}`, headers: bearer(full) }), 404)
    const gone = await call(sim, { path: '/v5/shops/findByCardTransaction', query: victim.input, headers: bearer(full) })
    expectDocumented('findByCardTransaction', gone, 200)
    expect(gone.body).toEqual({ result: 'notFound', handle: expect.any(String) })
  })

  it('unknown paths are 404 ROUTE_NOT_FOUND with the error body', async () => {
    const res = await call(sim, { path: '/v5/shops/findByBankTransfer/swift', headers: bearer(full) })
    expect(res.status).toBe(404)
    expect(ajv.validate({ $ref: 'openapi#/components/schemas/Error' }, res.body)).toBe(true)
    expect((res.body as { error: { code: string } }).error.code).toBe('ROUTE_NOT_FOUND')
  })

  it.each(operations.map((op) => op.id))('%s: 405 with Allow for a method the path does not have', async (operationId) => {
    const op = byId.get(operationId) as Operation
    const pathMethods = operations.filter((o) => o.template === op.template).map((o) => o.method)
    const wrong = ['PUT', 'DELETE', 'PATCH', 'GET', 'POST'].find((m) => !pathMethods.includes(m)) as RawRequest['method']
    const request = validRequest(operationId, full)
    const res = await call(sim, { ...request, method: wrong })
    expectDocumented(operationId, res, 405)
    expect(String(res.headers.allow).split(', ').sort()).toEqual([...new Set(pathMethods)].sort())
  })

  it.each(operations.filter((op) => '415' in op.responses).map((op) => op.id))('%s: 415 for a body that is not JSON', async (operationId) => {
    const request = validRequest(operationId, full)
    const contentType = operationId === 'getToken' ? 'application/json' : 'text/plain'
    const res = await call(sim, { ...request, headers: { ...request.headers, 'content-type': contentType } })
    expectDocumented(operationId, res, 415)
  })

  it.each(operations.filter((op) => '429' in op.responses).map((op) => op.id))('%s: 429 with Retry-After when throttled', async (operationId) => {
    const request = validRequest(operationId, full)
    await admin(sim, 'PUT', '/__admin/faults', { throttleRate: 1, retryAfterSeconds: 7, count: 1, pathPrefix: request.path })
    const res = await call(sim, request)
    expectDocumented(operationId, res, 429)
    expect(res.headers['retry-after']).toBe('7')
    await admin(sim, 'DELETE', '/__admin/faults')
  })

  it.each(operations.flatMap((op) => ['500', '502', '503'].filter((s) => s in op.responses).map((s) => [op.id, Number(s)] as const)))('%s: %i from an injected server fault', async (operationId, status) => {
    const request = validRequest(operationId, full)
    await admin(sim, 'PUT', '/__admin/faults', { errorRate: 1, errorStatus: status, count: 1, pathPrefix: request.path })
    expectDocumented(operationId, await call(sim, request), status)
    await admin(sim, 'DELETE', '/__admin/faults')
  })

  it('batch answers one element per entry in request order, invalid entries included', async () => {
    const res = await call(sim, validRequest('findByCardTransactionBatch', full))
    expect(res.body).toEqual([
      { result: 'found', handle: card.expected.handle, shop: { uid: card.expected.shopUid } },
      { result: 'notFound', handle: expect.any(String) },
      { result: 'invalid', error: { code: cardInvalid.expected.code, message: expect.any(String), ...(cardInvalid.expected.parameter === undefined ? {} : { parameter: cardInvalid.expected.parameter }) } },
    ])
  })

  it('reaches every status documented for every operation', () => {
    const documented = operations.flatMap((op) => Object.keys(op.responses).map((status) => `${op.id} ${status}`))
    expect(documented.filter((pair) => !reached.has(pair))).toEqual([])
  })
})
