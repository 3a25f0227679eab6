import type { Merchant, Shop } from '@tep/schemas'
import type { EntityVersions } from './entity-versions.ts'
import type { EntityKind, MerchantData, RefreshInput, ShopData } from './refresh-input.ts'

/**
 * Reads shops and merchants from the API. `null` means the API answered 404:
 * the entity is gone. Any thrown error is systemic for the whole batch, except
 * those `isRecordScoped` recognises (a 400 for this one key).
 */
export interface EntityFetcher {
  shop(uid: string, signal?: AbortSignal): Promise<ShopData | null>
  merchant(uid: string, signal?: AbortSignal): Promise<MerchantData | null>
}

export type RefreshOutput =
  | { entity: 'shop'; key: string; value: Shop | null }
  | { entity: 'merchant'; key: string; value: Merchant | null }

export type SkipReason =
  | 'not-in-table'
  | 'stale'
  | 'fresh'
  | 'rejected'
  | 'handle-level'
  | 'unknown-level'
  | 'inconsistent'
  | 'superseded'

export interface RefreshStats {
  fetched: number
  refreshed: Record<EntityKind, number>
  tombstoned: Record<EntityKind, number>
  skipped: { entity: EntityKind | 'none'; reason: SkipReason; key: string }[]
  /** Items that name no entity (the feed sent no key): the caller falls back to the age rule. */
  unkeyed: { level: string; itemId: number; seenAt: number }[]
  /** Every write, with where its snapshot came from (a fresh API read, or ingest). */
  written: { entity: EntityKind; key: string; source: 'api' | 'ingest'; tombstone: boolean }[]
}

export interface RefreshContext {
  views: Record<EntityKind, EntityVersions>
  fetcher: EntityFetcher
  now: () => number
  /** Sweep requests re-fetch only entries at least this old (they may have been refreshed since the request). */
  refreshAfterMs: number
  /** Parallel API reads within one batch. */
  concurrency: number
  isRecordScoped: (err: unknown) => boolean
  signal?: AbortSignal
  onRecordScopedError?: (entity: EntityKind, key: string, err: unknown) => void
}

interface Candidate {
  entity: EntityKind
  key: string
  version: number
  value: Shop | Merchant | null
  /** A fresh read: causally newer than anything known, whatever the clocks say. */
  fresh: boolean
  /** Highest version among the candidates this one superseded (a fresh read must rank above them). */
  supersedes?: number
}

const id = (entity: EntityKind, key: string) => `${entity}\u0000${key}`

/**
 * Turns one consumed batch into at most one write per entity key:
 *
 * - invalidations of keys the table holds are coalesced into one API read per
 *   key (whatever the number of items for it in the batch), and the result
 *   replaces the snapshot, or becomes a tombstone when the API says 404;
 * - invalidations of keys the table does not hold fetch nothing (the table only
 *   keeps what transactions referenced; ingest fetches on a miss) but are
 *   remembered, so an older in-flight ingest snapshot cannot land afterwards;
 * - snapshots ingest fetched are written only when not older than what the
 *   table holds (newest wins by fetchedAt, equal versions are rewritten so a
 *   retried batch after an aborted transaction still writes them);
 * - sweep requests re-fetch only entries that are still old.
 *
 * Order inside a batch does not matter for the result: per key, the newest
 * candidate wins, and a fresh API read beats anything older.
 */
export async function refreshBatch(
  inputs: readonly RefreshInput[],
  ctx: RefreshContext,
): Promise<{ outputs: RefreshOutput[]; stats: RefreshStats }> {
  const stats: RefreshStats = {
    fetched: 0,
    refreshed: { shop: 0, merchant: 0 },
    tombstoned: { shop: 0, merchant: 0 },
    skipped: [],
    unkeyed: [],
    written: [],
  }
  const toFetch = new Map<string, { entity: EntityKind; key: string; itemId: number | null }>()
  const candidates = new Map<string, Candidate>()
  const offer = (c: Candidate) => {
    const k = id(c.entity, c.key)
    const current = candidates.get(k)
    if (
      current === undefined ||
      (c.fresh && !current.fresh) ||
      (c.fresh === current.fresh && c.version >= current.version)
    ) {
      if (current !== undefined) stats.skipped.push({ entity: c.entity, reason: 'superseded', key: c.key })
      candidates.set(
        k,
        current === undefined ? c : { ...c, supersedes: Math.max(current.version, current.supersedes ?? 0) },
      )
    } else {
      stats.skipped.push({ entity: c.entity, reason: 'superseded', key: c.key })
    }
  }

  const invalidate = (entity: EntityKind, key: string, itemId: number, seenAt: number, now: number) => {
    const view = ctx.views[entity]
    // A snapshot offered earlier in this batch makes the key known: re-read it.
    if (!view.isLive(key, now) && !candidates.has(id(entity, key))) {
      view.markInvalidated(key, seenAt)
      stats.skipped.push({ entity, reason: 'not-in-table', key })
      return
    }
    const k = id(entity, key)
    const prev = toFetch.get(k)
    toFetch.set(k, { entity, key, itemId: Math.max(prev?.itemId ?? 0, itemId) })
  }

  for (const input of inputs) {
    const now = ctx.now()
    switch (input.kind) {
      case 'ignored':
        stats.skipped.push({ entity: 'none', reason: input.reason, key: input.detail })
        break
      case 'unkeyed':
        stats.unkeyed.push({ level: input.level, itemId: input.itemId, seenAt: input.seenAt })
        break
      case 'invalidation':
        invalidate(input.entity, input.key, input.itemId, input.seenAt, now)
        break
      case 'invalidation-either': {
        // The feed did not say shop or merchant: re-read the key wherever the table holds it.
        const held = (['shop', 'merchant'] as const).filter(
          (e) => ctx.views[e].isLive(input.key, now) || candidates.has(id(e, input.key)),
        )
        if (held.length === 0) {
          for (const e of ['shop', 'merchant'] as const) ctx.views[e].markInvalidated(input.key, input.seenAt)
          stats.skipped.push({ entity: 'none', reason: 'not-in-table', key: input.key })
        }
        for (const e of held) invalidate(e, input.key, input.itemId, input.seenAt, now)
        break
      }
      case 'expiry': {
        const entry = ctx.views[input.entity].get(input.key, now)
        if (entry === undefined || entry.deleted) {
          stats.skipped.push({ entity: input.entity, reason: 'not-in-table', key: input.key })
        } else if (now - entry.version < ctx.refreshAfterMs) {
          stats.skipped.push({ entity: input.entity, reason: 'fresh', key: input.key })
        } else {
          const k = id(input.entity, input.key)
          if (!toFetch.has(k)) toFetch.set(k, { entity: input.entity, key: input.key, itemId: null })
        }
        break
      }
      case 'fetched': {
        const view = ctx.views[input.entity]
        if (input.snapshot === null && !view.isLive(input.key, now)) {
          // Nothing to delete: the table never held it, or already holds a tombstone.
          stats.skipped.push({ entity: input.entity, reason: 'not-in-table', key: input.key })
          break
        }
        const floor = view.floor(input.key, now)
        if (floor !== undefined && input.version < floor) {
          stats.skipped.push({ entity: input.entity, reason: 'stale', key: input.key })
          break
        }
        offer({
          entity: input.entity,
          key: input.key,
          version: input.version,
          value: input.snapshot,
          fresh: false,
        })
        break
      }
    }
  }

  await forEachBounded([...toFetch.values()], ctx.concurrency, async ({ entity, key, itemId }) => {
    let data: ShopData | MerchantData | null
    try {
      data =
        entity === 'shop'
          ? await ctx.fetcher.shop(key, ctx.signal)
          : await ctx.fetcher.merchant(key, ctx.signal)
    } catch (err) {
      if (!ctx.isRecordScoped(err)) throw err
      ctx.onRecordScopedError?.(entity, key, err)
      stats.skipped.push({ entity, reason: 'rejected', key })
      return
    }
    stats.fetched += 1
    const fetchedAt = ctx.now()
    const value =
      data === null ? null : ({ ...data, fetchedAt, invalidationItemId: itemId } as Shop | Merchant)
    offer({ entity, key, version: fetchedAt, value, fresh: true })
  })

  const outputs: RefreshOutput[] = []
  const now = ctx.now()
  for (const c of candidates.values()) {
    const view = ctx.views[c.entity]
    const floor = view.floor(c.key, now)
    if (!c.fresh && floor !== undefined && c.version < floor) {
      stats.skipped.push({ entity: c.entity, reason: 'stale', key: c.key })
      continue
    }
    // A fresh read is stamped at least as new as the table so a skewed clock elsewhere cannot shadow it.
    const version = c.fresh ? Math.max(c.version, floor ?? 0, c.supersedes ?? 0) : c.version
    view.recordWrite(c.key, { version, deleted: c.value === null }, now)
    if (c.value === null) stats.tombstoned[c.entity] += 1
    else stats.refreshed[c.entity] += 1
    stats.written.push({
      entity: c.entity,
      key: c.key,
      source: c.fresh ? 'api' : 'ingest',
      tombstone: c.value === null,
    })
    outputs.push(
      c.entity === 'shop'
        ? { entity: 'shop', key: c.key, value: c.value as Shop | null }
        : { entity: 'merchant', key: c.key, value: c.value as Merchant | null },
    )
  }
  return { outputs, stats }
}

/**
 * Runs `work` over `items` with at most `limit` in flight. After the first
 * failure no new item starts; the failure is rethrown once the running ones
 * have settled (no unhandled rejections, no work left running behind the caller).
 */
async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  let failure: { err: unknown } | undefined
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!
      try {
        await work(item)
      } catch (err) {
        failure ??= { err }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  if (failure !== undefined) throw failure.err
}
