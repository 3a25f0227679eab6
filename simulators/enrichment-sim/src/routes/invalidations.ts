import type { FastifyInstance } from 'fastify'
import { LEVELS } from '../core/invalidation-log.ts'
import type { Level } from '../core/invalidation-log.ts'
import { ApiError, invalidParameter } from '../errors.ts'
import { registerPath } from '../http/app.ts'
import type { SimContext } from '../http/context.ts'
import { apiGate } from '../http/guards.ts'

export const DEFAULT_PAGE_SIZE = 100
export const MAX_PAGE_SIZE = 1000

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name]
  if (Array.isArray(value)) throw new ApiError(400, 'DUPLICATE_PARAMETER', `parameter ${name} is given ${value.length} times; send it once`, { parameter: name })
  return value === undefined ? undefined : String(value)
}

function nonNegativeInteger(query: Record<string, unknown>, name: string): number | undefined {
  const text = single(query, name)
  if (text === undefined) return undefined
  const value = Number(text)
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(value)) throw invalidParameter(name, `${name} must be a non-negative integer, got ${JSON.stringify(text)}`)
  return value
}

export function parseLevels(text: string | undefined): Set<Level> {
  if (text === undefined) return new Set(LEVELS)
  const levels = text.split(',').map((l) => l.trim())
  for (const level of levels) {
    if (!(LEVELS as readonly string[]).includes(level)) throw invalidParameter('level', `level must be a comma-separated list of ${LEVELS.join(', ')}; got ${JSON.stringify(level)}`)
  }
  return new Set(levels as Level[])
}

export function registerInvalidationRoutes(app: FastifyInstance, context: SimContext): void {
  registerPath(app, '/v5/invalidations', {
    GET: {
      operation: 'getInvalidations',
      gate: apiGate(context, 'invalidations'),
      handler: async (request) => {
        const query = request.query as Record<string, unknown>
        const fromId = nonNegativeInteger(query, 'fromId') ?? 0
        const toId = nonNegativeInteger(query, 'toId')
        if (toId !== undefined && toId < fromId) throw invalidParameter('toId', `toId (${toId}) must not be below fromId (${fromId})`)
        const levels = parseLevels(single(query, 'level'))
        const pageSize = nonNegativeInteger(query, 'pageSize') ?? DEFAULT_PAGE_SIZE
        if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) throw invalidParameter('pageSize', `pageSize must be from 1 to ${MAX_PAGE_SIZE}, got ${pageSize}`)
        const page = context.world.log.page({ fromId, ...(toId === undefined ? {} : { toId }), levels, pageSize })
        // ids-only: each batch as the interface description shows it, without level, type or keys.
        const batches = context.invalidationShape === 'ids-only' ? page.batches.map((b) => ({ ids: b.ids })) : page.batches
        return { data: { currentTime: context.clock.iso(), batches }, paging: page.paging }
      },
    },
  })
  registerPath(app, '/v5/invalidations/item/range', {
    GET: {
      operation: 'getInvalidationItemRange',
      gate: apiGate(context, 'invalidations'),
      handler: async (request) => {
        const from = single(request.query as Record<string, unknown>, 'from')
        if (from === undefined || from === '') throw new ApiError(400, 'MISSING_PARAMETER', 'from (an ISO-8601 date-time) is required', { parameter: 'from' })
        const moment = Date.parse(from)
        if (!/^\d{4}-\d{2}-\d{2}T/.test(from) || Number.isNaN(moment)) throw invalidParameter('from', `from must be an ISO-8601 date-time such as 2026-11-22T13:00:00Z, got ${JSON.stringify(from)}`)
        return { data: { ...context.world.log.rangeFrom(moment), currentTime: context.clock.iso() } }
      },
    },
  })
}
