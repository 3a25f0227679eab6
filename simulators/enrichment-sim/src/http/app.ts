import { setTimeout as delay } from 'node:timers/promises'
import formbody from '@fastify/formbody'
import Fastify, { LogController } from 'fastify'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerFactory, HTTPMethods } from 'fastify'
import { ApiError, EnrichmentSimConfigError, OAuthError } from '../errors.ts'
import type { SimContext } from './context.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** OpenAPI operationId, the key of `/__admin/stats`. */
    operation?: string
  }
}

const ALL_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
/** Runs before the body is parsed, so that 401/403 win over 400/415 for a bad body. */
export type Gate = (request: FastifyRequest) => Promise<void>

export interface RouteDef {
  operation: string
  handler: Handler
  gate?: Gate
}

export interface PathHandlers {
  GET?: RouteDef
  POST?: RouteDef
}

/**
 * Registers the methods of one path, and a 405 with `Allow` for every other
 * method, which Fastify would otherwise answer 404.
 */
export function registerPath(app: FastifyInstance, url: string, handlers: PathHandlers): void {
  const allowed = Object.keys(handlers) as Array<keyof PathHandlers>
  for (const method of allowed) {
    const def = handlers[method]
    if (def === undefined) continue
    const gate = def.gate
    app.route({ method, url, config: { operation: def.operation }, handler: def.handler, ...(gate === undefined ? {} : { onRequest: async (request: FastifyRequest) => gate(request) }) })
  }
  const others = ALL_METHODS.filter((m) => !(allowed as string[]).includes(m))
  app.route({
    method: others,
    url,
    config: { operation: 'methodNotAllowed' },
    handler: async (request) => {
      throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${url}; allowed: ${allowed.join(', ')}`, { headers: { allow: allowed.join(', ') } })
    },
  })
}

let requestCounter = 0

/**
 * The Fastify instance with what every request goes through: stats, request id,
 * injected faults (before anything else, like a failing network or gateway),
 * and the mapping of errors to the API's bodies.
 */
export function createApp(context: SimContext, logger: FastifyBaseLogger | undefined, serverFactory?: FastifyServerFactory, routing: { ignoreTrailingSlash?: boolean } = {}): FastifyInstance {
  const app = Fastify({
    // --contract-drift: `/v5/invalidations/` answers like `/v5/invalidations`, as lenient gateways do.
    ...(routing.ignoreTrailingSlash === true ? { routerOptions: { ignoreTrailingSlash: true } } : {}),
    ...(serverFactory === undefined ? {} : { serverFactory }),
    ...(logger === undefined ? { logger: false } : { loggerInstance: logger }),
    exposeHeadRoutes: false,
    // Per-request log lines would dominate at benchmark rates; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    // A batch of 500 entries is ~150 kB; leave room without accepting anything.
    bodyLimit: 5 * 1024 * 1024,
    genReqId: () => `req-${++requestCounter}`,
    return503OnClosing: true,
    forceCloseConnections: true,
  })
  app.register(formbody)

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
    if (request.url.startsWith('/__admin')) return
    context.stats.started(request.routeOptions.config.operation ?? 'unknownRoute')
    reply.raw.once('close', () => context.stats.finished(reply.raw.headersSent ? reply.raw.statusCode : undefined))
    if (!context.faults.applies(request.url)) return
    const wait = context.faults.delayMs()
    if (wait > 0) await delay(wait)
    const decision = context.faults.decide()
    switch (decision.kind) {
      case 'reset':
        reply.hijack()
        request.raw.socket.destroy()
        return
      case 'error':
        throw new ApiError(decision.status, faultCode(decision.status), `injected fault: ${decision.status}`, decision.status === 503 ? { headers: { 'retry-after': '1' } } : {})
      case 'throttle':
        throw new ApiError(429, 'RATE_LIMITED', `injected throttling; retry after ${decision.retryAfterSeconds} s`, { headers: { 'retry-after': String(decision.retryAfterSeconds) } })
      case 'none':
        return
    }
  })

  app.setNotFoundHandler(async (request) => {
    throw new ApiError(404, 'ROUTE_NOT_FOUND', `no such path: ${request.method} ${request.url.split('?')[0]}`)
  })

  app.setErrorHandler(async (error, request, reply) => {
    if (error instanceof ApiError) return reply.code(error.status).headers(error.headers).send(error.body())
    if (error instanceof OAuthError) return reply.code(error.status).headers(error.headers).send(error.body())
    if (error instanceof EnrichmentSimConfigError) return reply.code(400).send({ error: { code: error.code, message: error.message } })
    const fastifyError = error as { statusCode?: number; code?: string; message: string }
    if (fastifyError.statusCode === 415) {
      return reply.code(415).send({ error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: `unsupported Content-Type ${JSON.stringify(request.headers['content-type'] ?? '')}; send application/json` } })
    }
    if (fastifyError.statusCode === 413) return reply.code(413).send({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'the request body exceeds 5 MiB' } })
    if (fastifyError.statusCode === 400) return reply.code(400).send({ error: { code: 'INVALID_BODY', message: `the request body is not valid JSON: ${fastifyError.message}` } })
    request.log.error({ err: error }, 'unexpected error in the enrichment simulator')
    return reply.code(500).send({ error: { code: 'INTERNAL_ERROR', message: 'unexpected error in the simulator' } })
  })

  return app
}

function faultCode(status: number): string {
  if (status === 500) return 'INTERNAL_ERROR'
  if (status === 502) return 'BAD_GATEWAY'
  if (status === 503) return 'SERVICE_UNAVAILABLE'
  if (status === 504) return 'GATEWAY_TIMEOUT'
  return 'INJECTED_FAULT'
}
