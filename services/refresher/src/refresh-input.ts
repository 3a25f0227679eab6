import { UNKNOWN_LEVEL, type Invalidation, type Merchant, type MerchantDataFetched, type Shop } from '@tep/schemas'

export type EntityKind = 'shop' | 'merchant'

/** A snapshot as read from the API, before the refresher stamps it. */
export type ShopData = Omit<Shop, 'fetchedAt' | 'invalidationItemId'>
export type MerchantData = Omit<Merchant, 'fetchedAt' | 'invalidationItemId'>

/**
 * Type of the refresh requests the sweep publishes to the invalidations topic
 * (they are not feed items; their `itemId` is 0). See README "Sweep".
 */
export const EXPIRY_TYPE = 'expired'
/** Item id of sweep requests: feed items have ids >= 1. */
export const EXPIRY_ITEM_ID = 0

/** What one consumed record asks the refresher to do. */
export type RefreshInput =
  | {
      kind: 'invalidation'
      entity: EntityKind
      key: string
      itemId: number
      type: string | null
      seenAt: number
    }
  | { kind: 'expiry'; entity: EntityKind; key: string; requestedAt: number }
  | { kind: 'fetched'; entity: 'shop'; key: string; snapshot: Shop | null; version: number }
  | { kind: 'fetched'; entity: 'merchant'; key: string; snapshot: Merchant | null; version: number }
  /** An item of level `unknown` (the feed sent no level) with a key: shop or merchant, whichever the table holds. */
  | {
      kind: 'invalidation-either'
      key: string
      itemId: number
      type: string | null
      seenAt: number
    }
  /** A shop, merchant or unknown-level item without an entity key: something changed, the feed does not say what. */
  | { kind: 'unkeyed'; level: string; itemId: number; seenAt: number }
  | { kind: 'ignored'; reason: 'handle-level' | 'unknown-level' | 'inconsistent'; detail: string }

export { UNKNOWN_LEVEL }

function entityOfLevel(level: string): EntityKind | undefined {
  const l = level.toLowerCase()
  return l === 'shop' ? 'shop' : l === 'merchant' ? 'merchant' : undefined
}

/**
 * An Invalidation record. Handle-level items (transaction mappings) need no
 * table update: the shop and merchant behind them did not change. Their
 * re-enrichment is the `reenrich` tool's job (see README). Items the feed
 * described incompletely (level `unknown`, empty entity key) are turned into
 * what can still be done with them (docs/DECISIONS.md, "Invalidation batches
 * that carry only ids").
 */
export function fromInvalidation(value: Invalidation): RefreshInput {
  const entity = entityOfLevel(value.level)
  const level = value.level.toLowerCase()
  if (value.entityKey === '' && level !== 'handle' && (entity !== undefined || level === UNKNOWN_LEVEL))
    return { kind: 'unkeyed', level: value.level, itemId: value.itemId, seenAt: value.seenAt }
  if (entity === undefined && level === UNKNOWN_LEVEL) {
    return {
      kind: 'invalidation-either',
      key: value.entityKey,
      itemId: value.itemId,
      type: value.type,
      seenAt: value.seenAt,
    }
  }
  if (entity === undefined) {
    return value.level.toLowerCase() === 'handle'
      ? { kind: 'ignored', reason: 'handle-level', detail: value.entityKey }
      : { kind: 'ignored', reason: 'unknown-level', detail: `level ${value.level} of item ${value.itemId}` }
  }
  if (value.type === EXPIRY_TYPE && value.itemId === EXPIRY_ITEM_ID) {
    return { kind: 'expiry', entity, key: value.entityKey, requestedAt: value.seenAt }
  }
  return {
    kind: 'invalidation',
    entity,
    key: value.entityKey,
    itemId: value.itemId,
    type: value.type,
    seenAt: value.seenAt,
  }
}

/**
 * A MerchantDataFetched record (an ingest cache miss). A 404 carries no
 * snapshot and so no fetch time: the record's Kafka timestamp stands in for it.
 */
export function fromFetched(value: MerchantDataFetched, recordTimestamp: number): RefreshInput {
  if (value.entityType === 'SHOP') {
    if (value.notFound)
      return { kind: 'fetched', entity: 'shop', key: value.uid, snapshot: null, version: recordTimestamp }
    if (value.shop === null || value.shop.uid !== value.uid) {
      return {
        kind: 'ignored',
        reason: 'inconsistent',
        detail: `MerchantDataFetched SHOP ${value.uid} without a matching shop`,
      }
    }
    return {
      kind: 'fetched',
      entity: 'shop',
      key: value.uid,
      snapshot: value.shop,
      version: value.shop.fetchedAt,
    }
  }
  if (value.notFound)
    return { kind: 'fetched', entity: 'merchant', key: value.uid, snapshot: null, version: recordTimestamp }
  if (value.merchant === null || value.merchant.uid !== value.uid) {
    return {
      kind: 'ignored',
      reason: 'inconsistent',
      detail: `MerchantDataFetched MERCHANT ${value.uid} without a matching merchant`,
    }
  }
  return {
    kind: 'fetched',
    entity: 'merchant',
    key: value.uid,
    snapshot: value.merchant,
    version: value.merchant.fetchedAt,
  }
}
