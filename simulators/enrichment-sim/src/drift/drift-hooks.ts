import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.ts'
import { TOKEN_PATH } from '../routes/token.ts'
import type { ContractDrift } from './drift-plan.ts'

type Json = Record<string, unknown>

const TYPE_CODES: Record<string, number> = { update: 1, delete: 2, remap: 3 }

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Serves the modelled answers in the other shapes the description allows, by
 * rewriting them on their way out (the routes stay as they are): hooks on the
 * invalidation feed, item/range, the token endpoint and the entity reads.
 * Refusals (a 400 for `level`, item/range not served) are thrown before the
 * handler, as a real gateway would.
 */
export function installContractDrift(app: FastifyInstance, drift: ContractDrift): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const route = request.routeOptions.url
    if (route === '/v5/invalidations') {
      const query = new URLSearchParams(request.url.split('?')[1] ?? '')
      if (!query.has('level')) return
      const level = drift.draw('level')
      if (level === 'refused-named')
        throw new ApiError(400, 'UNKNOWN_PARAMETER', 'unknown query parameter: level', { parameter: 'level' })
      if (level === 'refused-bare') throw new ApiError(400, 'BAD_REQUEST', 'Bad Request')
    } else if (route === '/v5/invalidations/item/range') {
      const variant = drift.draw('itemRange')
      if (variant === 'not-found') throw new ApiError(404, 'ROUTE_NOT_FOUND', `no such path: GET ${request.url.split('?')[0]}`)
      if (variant === 'refuses-from')
        throw new ApiError(400, 'MISSING_PARAMETER', 'since (epoch seconds) is required', { parameter: 'since' })
    }
  })

  app.addHook('preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode !== 200 || !isObject(payload)) return payload
    switch (request.routeOptions.url) {
      case '/v5/invalidations':
        return invalidationPage(drift, payload)
      case '/v5/invalidations/item/range':
        return itemRange(drift, payload)
      case TOKEN_PATH:
        return tokenAnswer(drift, payload)
      case '/v5/shops/:id':
        return entity(drift, payload, ['url', 'tags', 'googlePlaceId', 'category'])
      case '/v5/merchants/:id':
        return entity(drift, payload, ['url', 'logo', 'tags'])
      default:
        return payload
    }
  })
}

function invalidationPage(drift: ContractDrift, page: Json): Json {
  const data = isObject(page.data) ? { ...page.data } : {}
  const paging = isObject(page.paging) ? { ...page.paging } : {}
  const extra = drift.draw('unknownFields') === 'added'
  const typeVariant = drift.draw('batchType')
  const idsVariant = drift.draw('batchIds')
  data.batches = (Array.isArray(data.batches) ? data.batches : []).map((raw) => {
    const batch: Json = isObject(raw) ? { ...raw } : {}
    if (typeof batch.type === 'string') {
      if (typeVariant === 'number') batch.type = TYPE_CODES[batch.type] ?? 0
      else if (typeVariant === 'absent') delete batch.type
    }
    if (idsVariant === 'numeric-strings' && Array.isArray(batch.ids)) batch.ids = batch.ids.map(String)
    if (extra) batch.weight = 1
    return batch
  })
  const time = drift.draw('currentTime')
  if (time === 'epoch-number' && typeof data.currentTime === 'string') data.currentTime = Date.parse(data.currentTime)
  else if (time === 'absent') delete data.currentTime
  else if (time === 'null') data.currentTime = null
  const lastId = drift.draw('lastId')
  if (lastId === 'string') paging.lastId = String(paging.lastId)
  else if (lastId === 'absent') delete paging.lastId
  const hasMore = drift.draw('hasMore')
  if (hasMore === 'string') paging.hasMore = String(paging.hasMore)
  else if (hasMore === 'number') paging.hasMore = paging.hasMore === true ? 1 : 0
  else if (hasMore === 'absent') delete paging.hasMore
  if (extra) {
    data.region = 'eu-central'
    paging.cursor = `c${String(paging.lastId ?? '')}`
  }
  return { ...(extra ? { meta: { version: '5.3' } } : {}), data, paging }
}

function itemRange(drift: ContractDrift, answer: Json): Json {
  const data = isObject(answer.data) ? answer.data : {}
  switch (drift.draw('itemRange')) {
    case 'top-level-strings':
      return { fromId: String(data.fromId), toId: String(data.toId), currentTime: data.currentTime }
    case 'other-shape':
      return { data: { firstId: data.fromId, lastId: data.toId } }
    default:
      return answer
  }
}

function tokenAnswer(drift: ContractDrift, answer: Json): Json {
  const out: Json = { ...answer }
  const expires = drift.draw('tokenExpiresIn')
  if (expires === 'string') out.expires_in = String(out.expires_in)
  else if (expires === 'absent') delete out.expires_in
  const type = drift.draw('tokenType')
  if (type === 'bearer') out.token_type = 'bearer'
  else if (type === 'absent') delete out.token_type
  const extras = drift.draw('tokenExtras')
  if (extras === 'added') Object.assign(out, { refresh_expires_in: 0, 'not-before-policy': 0, session_state: 'sim' })
  else if (extras === 'scope-absent') delete out.scope
  return out
}

function entity(drift: ContractDrift, answer: Json, optional: readonly string[]): Json {
  const variant = drift.draw('entity')
  if (variant === 'unknown-fields') return { ...answer, _links: { self: 'sim' }, updatedAt: Date.now() }
  if (variant === 'optional-absent') {
    const out = { ...answer }
    for (const field of optional) delete out[field]
    return out
  }
  return answer
}
