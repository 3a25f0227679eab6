import type { FastifyInstance, FastifyRequest } from 'fastify'
import { apiGate, requireJson } from '../http/guards.ts'
import { registerPath } from '../http/app.ts'
import type { SimContext } from '../http/context.ts'
import { validateCardInput, validateTransferInput } from '../core/input-validation.ts'
import type { LookupInput } from '../core/input-validation.ts'
import type { Resolution } from '../core/world.ts'
import { ApiError } from '../errors.ts'

export const MAX_BATCH = 500

type FindResult = { result: 'found' | 'notFound'; handle: string; shop?: unknown; merchant?: unknown }

function render(context: SimContext, resolution: Resolution, complete: boolean): FindResult {
  context.stats.lookups++
  if (resolution.shopIndex === undefined) return { result: 'notFound', handle: resolution.handle }
  if (!complete) return { result: 'found', handle: resolution.handle, shop: { uid: context.world.data.shopUid(resolution.shopIndex) } }
  const merchantIndex = context.world.data.merchantIndexOfShop(resolution.shopIndex)
  return { result: 'found', handle: resolution.handle, shop: context.world.shopJson(resolution.shopIndex), merchant: context.world.merchantJson(merchantIndex) }
}

function jsonObject(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError(400, 'INVALID_BODY', `${what} must be a JSON object`)
  return body as Record<string, unknown>
}

function cardLookup(context: SimContext, input: LookupInput, complete: boolean): FindResult {
  return render(context, context.world.resolveCard(input), complete)
}

function batch(context: SimContext, request: FastifyRequest, complete: boolean): unknown[] {
  requireJson(request)
  const body = jsonObject(request.body, 'the batch body')
  const entries = body.requests
  if (!Array.isArray(entries)) throw new ApiError(400, 'INVALID_BODY', 'the batch body needs a "requests" array', { parameter: 'requests' })
  if (entries.length < 1 || entries.length > MAX_BATCH) {
    throw new ApiError(400, 'INVALID_BATCH_SIZE', `"requests" must hold 1 to ${MAX_BATCH} entries, got ${entries.length}`, { parameter: 'requests' })
  }
  return entries.map((entry, i) => {
    try {
      return cardLookup(context, validateCardInput(jsonObject(entry, `requests[${i}]`), 'json'), complete)
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      return { result: 'invalid', error: err.body().error }
    }
  })
}

export function registerLookupRoutes(app: FastifyInstance, context: SimContext): void {
  for (const complete of [false, true]) {
    const prefix = complete ? '/v5/shops/complete' : '/v5/shops'
    const name = complete ? 'completeFindByCardTransaction' : 'findByCardTransaction'
    registerPath(app, `${prefix}/findByCardTransaction`, {
      GET: {
        operation: name,
        gate: apiGate(context, 'find'),
        handler: async (request) => {
          return cardLookup(context, validateCardInput(request.query as Record<string, unknown>, 'query'), complete)
        },
      },
      POST: {
        operation: `${name}Post`,
        gate: apiGate(context, 'find'),
        handler: async (request) => {
          requireJson(request)
          return cardLookup(context, validateCardInput(jsonObject(request.body, 'the body'), 'json'), complete)
        },
      },
    })
    registerPath(app, `${prefix}/findByCardTransactionBatch`, {
      POST: {
        operation: `${name}Batch`,
        gate: apiGate(context, 'find'),
        handler: async (request) => {
          return batch(context, request, complete)
        },
      },
    })
  }

  for (const scheme of ['certis', 'sepa', 'uk'] as const) {
    registerPath(app, `/v5/shops/findByBankTransfer/${scheme}`, {
      GET: {
        operation: `findByBankTransfer${scheme.charAt(0).toUpperCase()}${scheme.slice(1)}`,
        gate: apiGate(context, 'find'),
        handler: async (request) => {
          const input = validateTransferInput(scheme, request.query as Record<string, unknown>)
          if (input.aggCount !== undefined && input.aggCount !== '') context.stats.aggregatedHits += Number(input.aggCount)
          return render(context, context.world.resolveTransfer(scheme, input), false)
        },
      },
    })
  }

  const notImplemented = (operation: string, what: string) => ({
    operation,
    gate: apiGate(context, undefined),
    handler: async () => {
      throw new ApiError(501, 'NOT_IMPLEMENTED', `${what} lookups are not offered by this service`)
    },
  })
  registerPath(app, '/v5/shops/findByBankTransfer/jopacc', { GET: notImplemented('findByBankTransferJopacc', 'JoPACC transfer') })
  registerPath(app, '/v5/shops/findByBankTransfer/p2p', { GET: notImplemented('findByBankTransferP2p', 'person-to-person transfer') })
  registerPath(app, '/v5/shops/findByOpenDataTransaction', { POST: notImplemented('findByOpenDataTransaction', 'open-banking data') })
}
