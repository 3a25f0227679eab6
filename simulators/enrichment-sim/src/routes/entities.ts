import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.ts'
import { registerPath } from '../http/app.ts'
import type { SimContext } from '../http/context.ts'
import { apiGate } from '../http/guards.ts'

/** `/v5/shops/{id}` (uid or handle) and `/v5/merchants/{id}`. */
export function registerEntityRoutes(app: FastifyInstance, context: SimContext): void {
  registerPath(app, '/v5/shops/:id', {
    GET: {
      operation: 'getShop',
      gate: apiGate(context, 'read'),
      handler: async (request) => {
        const { id } = request.params as { id: string }
        const shopIndex = context.world.resolveShopId(id)
        if (shopIndex === undefined) throw new ApiError(404, 'SHOP_NOT_FOUND', `no shop with uid or handle ${JSON.stringify(id)} (unknown, or deleted)`)
        return context.world.shopJson(shopIndex)
      },
    },
  })
  registerPath(app, '/v5/merchants/:id', {
    GET: {
      operation: 'getMerchant',
      gate: apiGate(context, 'read'),
      handler: async (request) => {
        const { id } = request.params as { id: string }
        const merchantIndex = context.world.resolveMerchantUid(id)
        if (merchantIndex === undefined) throw new ApiError(404, 'MERCHANT_NOT_FOUND', `no merchant with uid ${JSON.stringify(id)} (unknown, or deleted)`)
        return context.world.merchantJson(merchantIndex)
      },
    },
  })
}
