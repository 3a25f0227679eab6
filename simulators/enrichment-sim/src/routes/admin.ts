import type { FastifyInstance } from 'fastify'
import { generateSamples } from '@tep/sim-data'
import type { Sample, SampleKind, SampleOutcome } from '@tep/sim-data'
import { parseFaults } from '../core/faults.ts'
import type { InvalidationItem } from '../core/invalidation-log.ts'
import { parseMutation } from '../core/mutations.ts'
import { cardPattern, transferPattern } from '../core/world.ts'
import type { World } from '../core/world.ts'
import { ApiError, EnrichmentSimConfigError } from '../errors.ts'
import type { SimContext } from '../http/context.ts'

function itemJson(item: InvalidationItem): Record<string, unknown> {
  return { id: item.id, level: item.level, type: item.type, key: item.key, at: new Date(item.at).toISOString() }
}

function finiteNumber(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new EnrichmentSimConfigError(`${name} must be a number, got ${JSON.stringify(value)}`)
  return value
}

/**
 * A sample's expected answer in the world as it is now: its shop may have been
 * deleted since start, or its handle remapped. The matching itself is not re-run.
 * The handle shown is registered as issued (the mapping exists), so that it can be
 * read with `/v5/shops/{handle}` and remapped before any lookup used it.
 */
function currentExpectation(world: World, sample: Sample): Record<string, unknown> {
  const expected = sample.expected
  if (expected.outcome !== 'found') return expected
  const handle = world.handleOf(sample.kind === 'card' ? cardPattern(sample.input) : transferPattern(sample.operation.split('/')[1] as 'certis' | 'sepa' | 'uk', sample.input))
  const remapped = world.remaps.get(handle)
  let shopIndex: number | undefined
  if (remapped !== undefined) shopIndex = remapped >= 0 && world.isShopLive(remapped) ? remapped : undefined
  else if (sample.kind === 'transfer') shopIndex = world.mainShopOf(world.data.merchantIndexOfShop(expected.shopIndex))
  else shopIndex = world.isShopLive(expected.shopIndex) ? expected.shopIndex : undefined
  world.rememberHandle(handle, shopIndex)
  if (shopIndex === undefined) return { outcome: 'notFound', handle }
  const shop = world.data.shop(shopIndex)
  return { outcome: 'found', handle, shopUid: shop.uid, merchantUid: shop.merchantUid, rule: remapped !== undefined ? 'remap' : expected.rule }
}

/** `/__admin/*`: the simulator's control surface (no authentication; keep it on loopback). */
export function registerAdminRoutes(app: FastifyInstance, context: SimContext, resetAll: () => void): void {
  app.get('/__admin/health', async () => ({ status: 'ok', seed: context.world.data.seed, shops: context.world.data.shopCount, merchants: context.world.data.merchantCount }))

  app.get('/__admin/faults', async () => ({ faults: context.faults.config, injected: context.faults.injected }))
  app.put('/__admin/faults', async (request) => {
    const { faults, revokeTokens } = parseFaults(request.body)
    context.faults.set(faults)
    if (revokeTokens) context.tokens.revokeAll()
    return { faults: context.faults.config, tokensRevoked: revokeTokens }
  })
  app.delete('/__admin/faults', async () => {
    context.faults.clear()
    return { faults: context.faults.config }
  })

  app.get('/__admin/clock', async () => ({ now: context.clock.iso(), offsetMs: context.clock.offsetMs }))
  app.post('/__admin/clock', async (request) => {
    const body = (request.body ?? {}) as Record<string, unknown>
    const known = ['advanceSeconds', 'advanceMs', 'offsetMs', 'now']
    for (const key of Object.keys(body)) if (!known.includes(key)) throw new EnrichmentSimConfigError(`unknown clock setting ${JSON.stringify(key)}; known: ${known.join(', ')}`)
    if (body.now !== undefined) {
      const at = typeof body.now === 'string' ? Date.parse(body.now) : Number.NaN
      if (Number.isNaN(at)) throw new EnrichmentSimConfigError(`now must be an ISO-8601 date-time, got ${JSON.stringify(body.now)}`)
      context.clock.set(at)
    }
    if (body.offsetMs !== undefined) context.clock.setOffset(finiteNumber(body.offsetMs, 'offsetMs'))
    if (body.advanceMs !== undefined) context.clock.advance(finiteNumber(body.advanceMs, 'advanceMs'))
    if (body.advanceSeconds !== undefined) context.clock.advance(finiteNumber(body.advanceSeconds, 'advanceSeconds') * 1000)
    return { now: context.clock.iso(), offsetMs: context.clock.offsetMs }
  })

  app.get('/__admin/samples', async (request) => {
    const q = request.query as Record<string, string | undefined>
    const count = q.count === undefined ? 20 : Number(q.count)
    if (!Number.isInteger(count) || count < 0 || count > 10_000) throw new EnrichmentSimConfigError(`count must be an integer from 0 to 10000, got ${JSON.stringify(q.count)}`)
    if (q.kind !== undefined && q.kind !== 'card' && q.kind !== 'transfer') throw new EnrichmentSimConfigError(`kind must be card or transfer, got ${JSON.stringify(q.kind)}`)
    if (q.outcome !== undefined && !['found', 'notFound', 'invalid'].includes(q.outcome)) throw new EnrichmentSimConfigError(`outcome must be found, notFound or invalid, got ${JSON.stringify(q.outcome)}`)
    const seed = q.seed === undefined ? 0 : Number(q.seed)
    if (!Number.isInteger(seed)) throw new EnrichmentSimConfigError(`seed must be an integer, got ${JSON.stringify(q.seed)}`)
    const samples = generateSamples(context.world.data, {
      count,
      seed,
      ...(q.kind === undefined ? {} : { kind: q.kind as SampleKind }),
      ...(q.outcome === undefined ? {} : { outcome: q.outcome as SampleOutcome }),
    })
    return {
      samples: samples.map((s) => ({
        kind: s.kind,
        operation: s.operation,
        method: 'GET',
        path: `/v5/shops/${s.operation}`,
        description: s.description,
        input: s.input,
        expected: currentExpectation(context.world, s),
      })),
    }
  })

  app.get('/__admin/stats', async () => ({ ...context.stats.toJSON(), faultsInjected: context.faults.injected, invalidations: { lastId: context.world.log.lastId }, suggestions: context.suggestions.length }))
  app.delete('/__admin/stats', async () => {
    context.stats.reset()
    return context.stats.toJSON()
  })

  app.post('/__admin/mutations', async (request, reply) => {
    const items = context.mutator.apply(parseMutation(request.body))
    reply.code(201)
    return { items: items.map(itemJson) }
  })

  app.get('/__admin/suggestions', async () => ({ suggestions: context.suggestions }))

  // What lies behind a shop: how its terminals identify it and where its merchant is paid.
  app.get('/__admin/shops/:uid', async (request) => {
    const { uid } = request.params as { uid: string }
    const index = context.world.data.shopIndexByUid(uid)
    if (index === undefined) throw new ApiError(404, 'SHOP_NOT_FOUND', `no shop with uid ${JSON.stringify(uid)} in the data set`)
    const shop = context.world.data.shop(index)
    const merchant = context.world.data.merchant(shop.merchantIndex)
    return {
      live: context.world.isShopLive(index),
      shop: context.world.shopJson(index),
      card: shop.card,
      merchant: { uid: merchant.uid, name: context.world.merchantJson(shop.merchantIndex).name, shopCount: merchant.shopCount, bankAccounts: merchant.bankAccounts },
    }
  })

  app.post('/__admin/reset', async () => {
    resetAll()
    return { reset: true }
  })
}
