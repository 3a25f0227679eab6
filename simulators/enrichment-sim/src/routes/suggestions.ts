import type { FastifyInstance } from 'fastify'
import { ApiError, invalidParameter } from '../errors.ts'
import { registerPath } from '../http/app.ts'
import type { SimContext } from '../http/context.ts'
import { apiGate, requireJson } from '../http/guards.ts'

/** Kept in memory for inspection through `/__admin/suggestions`; the oldest go first beyond this. */
const KEEP = 10_000
let counter = 0

export function registerSuggestionRoute(app: FastifyInstance, context: SimContext): void {
  registerPath(app, '/v5/suggestions', {
    POST: {
      operation: 'postSuggestion',
      gate: apiGate(context, 'suggestions'),
      handler: async (request, reply) => {
        requireJson(request)
        const body = request.body
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError(400, 'INVALID_BODY', 'the suggestion must be a JSON object')
        const o = body as Record<string, unknown>
        for (const name of ['original', 'current'] as const) {
          if (o[name] !== undefined && (typeof o[name] !== 'object' || o[name] === null || Array.isArray(o[name]))) throw invalidParameter(name, `${name} must be a JSON object`)
        }
        if (o.original === undefined && o.current === undefined) {
          throw new ApiError(400, 'MISSING_PARAMETER', 'a suggestion needs original (the lookup and its answer) or current (the uids you hold), or both', { parameter: 'original' })
        }
        if (typeof o.suggestion !== 'string' || o.suggestion.trim() === '') throw new ApiError(400, 'MISSING_PARAMETER', 'suggestion (free text: what is wrong) is required', { parameter: 'suggestion' })
        if (o.source !== 'partner' && o.source !== 'user') throw invalidParameter('source', `source must be "partner" or "user", got ${JSON.stringify(o.source)}`)
        const id = `sg-${++counter}`
        context.suggestions.push({ id, receivedAt: context.clock.iso(), principal: request.principal?.key ?? 'unknown', body })
        if (context.suggestions.length > KEEP) context.suggestions.shift()
        reply.code(202)
        return { id }
      },
    },
  })
}
