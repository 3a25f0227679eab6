import type { FastifyInstance } from 'fastify'
import { isApiPath } from '../http/api-guard.ts'
import type { ContractDriftMode } from './contract-drift.ts'

function parseObject(payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== 'string' || payload === '') return undefined
  try {
    const v = JSON.parse(payload) as unknown
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/**
 * Applies the contract-drift mode to finished answers (Fastify `onSend`), so no route changes:
 * token answers, 401s of expired tokens and 2xx API answers; and answers the spelling of
 * `POST /payments/` that was not drawn with 404 `no operation`, as a gateway would.
 */
export function registerContractDrift(app: FastifyInstance, drift: ContractDriftMode): void {
  const unserved = drift.paymentsPath === '/payments/' ? '/payments' : '/payments/'
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'POST' || (req.url.split('?')[0] ?? '') !== unserved) return
    return reply.code(404).send({ errors: [{ error: 'NOT_FOUND', scope: null, parameters: null, message: `no operation POST ${unserved}` }] })
  })
  app.addHook('onSend', async (req, reply, payload) => {
    const path = req.url.split('?')[0] ?? ''
    if (req.method === 'POST' && path === '/oauth2/token' && reply.statusCode === 200) {
      const body = parseObject(payload)
      return body === undefined ? payload : JSON.stringify(drift.tokenAnswer(body))
    }
    if (!isApiPath(path)) return payload
    if (reply.statusCode === 401) {
      const bare = drift.unauthorized(parseObject(payload))
      if (bare === undefined) return payload
      // The modelled header names the reason too; a bank that gives none says nothing there either.
      void reply.header('www-authenticate', 'Bearer')
      if (bare.body === '') void reply.removeHeader('content-type')
      return bare.body
    }
    if (reply.statusCode >= 200 && reply.statusCode < 300) {
      const body = parseObject(payload)
      return body === undefined ? payload : JSON.stringify(drift.apiAnswer(body))
    }
    return payload
  })
}
