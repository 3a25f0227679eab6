import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.ts'

/**
 * The lookup operations the interface description does not publish ("The names
 * and variants of the `findBy*` operations and their input parameters: not
 * shown"): the batch POSTs and the `complete` variants. This project modelled
 * them (schemas/openapi/enrichment-v5.yaml); the real service may not have them.
 */
export const UNPUBLISHED_LOOKUP_PATHS: readonly string[] = [
  '/v5/shops/findByCardTransactionBatch',
  '/v5/shops/complete/findByCardTransaction',
  '/v5/shops/complete/findByCardTransactionBatch',
]

const UNPUBLISHED = new Set(UNPUBLISHED_LOOKUP_PATHS)

/**
 * Makes the simulator a service without those operations: every request to one
 * of their paths, whatever its method, is answered 404 `ROUTE_NOT_FOUND`, as the
 * simulator answers any path it does not have, before authentication, as a
 * gateway that routes by path would. Call it before the routes are registered.
 */
export function withoutBatchAndComplete(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const query = request.url.indexOf('?')
    const path = query === -1 ? request.url : request.url.slice(0, query)
    if (UNPUBLISHED.has(path)) throw new ApiError(404, 'ROUTE_NOT_FOUND', `no such path: ${request.method} ${path}`)
  })
}
