import { PipelineError } from '@tep/errors'
import type { Merchant, MerchantDataFetched, Shop } from '@tep/schemas'
import { SingleFlight } from '@tep/http'
import { merchantSnapshotData, shopSnapshotData } from '@tep/enrichment-client'
import type { ApiMerchant, ApiShop, EnrichmentPort } from './enrichment-port.ts'
import { toSystemic } from './lookup-outcome.ts'
import { timed, type IngestMetrics } from './metrics.ts'
import type { MerchantTables, SnapshotTable } from './snapshot-table.ts'

export type DetailSource = 'TABLE' | 'API'

export interface ResolvedDetails {
  /** Null when unknown, or when given as `shopAvro`. */
  shop: Shop | null
  /** Null when unknown, or when given as `merchantAvro`. */
  merchant: Merchant | null
  /** A table hit as the shop's Avro bytes instead of `shop` (option `tableHitsAsAvro`). */
  shopAvro?: Buffer
  /** A table hit as the merchant's Avro bytes instead of `merchant` (option `tableHitsAsAvro`). */
  merchantAvro?: Buffer
  /** From the shop snapshot; null when the shop is unknown or has no merchant. */
  merchantUid: string | null
  shopSource: DetailSource | null
  merchantSource: DetailSource | null
  /** What was read from the API for this record, to hand to the refresher in the same transaction. */
  fetched: MerchantDataFetched[]
}

export interface MerchantDetailsOptions {
  tables: MerchantTables
  client: EnrichmentPort
  /** Written into MerchantDataFetched.fetchedBy. */
  instanceId: string
  metrics?: IngestMetrics
  now?: () => number
  /**
   * A fetched snapshot is handed to the refresher with the records that waited
   * for the fetch. If none of those transactions commits (abort, crash) and the
   * compacted topic has not confirmed it after this long, the next record using
   * it carries it again. Default 30 s.
   */
  republishAfterMs?: number
  /** Bound on remembered unconfirmed fetches (oldest forgotten first). Default 100,000. */
  maxPending?: number
  /** Share of recent shop lookups missing the table above which it counts as cold. Default 0.1. */
  coldMissRate?: number
  /**
   * Table hits come as the snapshots' Avro bytes (`shopAvro`, `merchantAvro`;
   * `shop` and `merchant` are null then), written straight from the table
   * without making objects: the ingest embeds them in the enriched event as
   * they are. Default false (objects).
   */
  tableHitsAsAvro?: boolean
}

/** Shop and merchant as a `complete` lookup returned them with the find result. */
export interface ProvidedDetails {
  shop: ApiShop
  merchant?: ApiMerchant
}

/** Weight of the newest observation in the table miss-rate average (~ the last 50 lookups). */
const MISS_RATE_WEIGHT = 0.02

interface Fetch<T> {
  snapshot: T | null
  event: MerchantDataFetched
}

/** What resolving one kind of entity uses: its table, its API read and the single flight around it. */
interface Lane<T extends Shop | Merchant> {
  entity: 'SHOP' | 'MERCHANT'
  label: 'shops' | 'merchants'
  table: SnapshotTable<T>
  flight: SingleFlight<string, Fetch<T>>
  fetch: (uid: string) => Promise<Fetch<T>>
}

function lane<T extends Shop | Merchant>(entity: Lane<T>['entity'], table: SnapshotTable<T>, fetch: Lane<T>['fetch']): Lane<T> {
  return { entity, label: entity === 'SHOP' ? 'shops' : 'merchants', table, flight: new SingleFlight(), fetch }
}

/** A resolved shop or merchant: an object, or (a table hit with tableHitsAsAvro) its Avro bytes. */
interface Found<T> {
  snapshot: T | null
  avro?: Buffer
  /** With `avro`: the shop's merchantUid (the table's captured field). */
  captured?: string | null
  source: DetailSource | null
}

interface PendingConfirmation {
  event: MerchantDataFetched
  fetchedAt: number
  attachedAt: number
}

const NOT_FOUND = 'ENRICHMENT_NOT_FOUND'
/** A 404 for a path that does not exist means a wrong base URL, not a missing shop. */
const ROUTE_NOT_FOUND = 'ROUTE_NOT_FOUND'

const resultLabel = (err: unknown): string => (err instanceof PipelineError ? err.code : 'UNEXPECTED')

/**
 * Shop and merchant details for a matched record: from the local table, or on a
 * miss from the API with one request per uid in flight however many records wait
 * for it (single-flight). A fetched snapshot is used at once, stored in the local
 * table (unless the table already has newer data) and returned in `fetched` so
 * the caller publishes it to the refresher in the same Kafka transaction as the
 * enriched record.
 */
export class MerchantDetails {
  readonly #tables: MerchantTables
  readonly #client: EnrichmentPort
  readonly #instanceId: string
  readonly #metrics: IngestMetrics | undefined
  readonly #now: () => number
  readonly #republishAfterMs: number
  readonly #maxPending: number
  readonly #pending = new Map<string, PendingConfirmation>()
  readonly #coldMissRate: number
  readonly #asAvro: boolean
  readonly #shops: Lane<Shop>
  readonly #merchants: Lane<Merchant>
  /** Moving average of table misses among shop lookups; starts from the table's state. */
  #missRate: number | undefined

  constructor(options: MerchantDetailsOptions) {
    this.#tables = options.tables
    this.#client = options.client
    this.#instanceId = options.instanceId
    this.#metrics = options.metrics
    this.#now = options.now ?? Date.now
    this.#republishAfterMs = options.republishAfterMs ?? 30_000
    this.#maxPending = options.maxPending ?? 100_000
    this.#coldMissRate = options.coldMissRate ?? 0.1
    this.#asAvro = options.tableHitsAsAvro ?? false
    this.#shops = lane('SHOP', options.tables.shops, (uid) => this.#fetchShop(uid))
    this.#merchants = lane('MERCHANT', options.tables.merchants, (uid) => this.#fetchMerchant(uid))
  }

  /**
   * True while shop lookups often miss the table (an empty table after a start,
   * a new region of traffic): then `complete` lookups, which bring the shop and
   * merchant with the find result, save two requests per miss.
   */
  tableIsCold(): boolean {
    this.#missRate ??= this.#tables.shops.size === 0 ? 1 : 0
    return this.#missRate > this.#coldMissRate
  }

  #observe(miss: boolean): void {
    const rate = this.#missRate ?? (this.#tables.shops.size === 0 ? 1 : 0)
    this.#missRate = rate * (1 - MISS_RATE_WEIGHT) + (miss ? MISS_RATE_WEIGHT : 0)
  }

  /**
   * Details of a found shop. `provided` is what a `complete` lookup returned with
   * the find result; without it the table answers, or the API on a miss.
   */
  resolve(shopUid: string, provided?: ProvidedDetails): ResolvedDetails | Promise<ResolvedDetails> {
    // Table hits answer without a promise (most records: no await per lookup); any failure is a rejection.
    try {
      const fetched: MerchantDataFetched[] = []
      const shop =
        provided === undefined
          ? this.#resolve(this.#shops, shopUid, fetched)
          : this.#accept('SHOP', shopUid, this.#tables.shops, shopSnapshot(provided.shop, shopUid, this.#now()), fetched)
      if (shop instanceof Promise) return shop.then((found) => this.#withMerchant(found, provided, fetched))
      return this.#withMerchant(shop, provided, fetched)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  #withMerchant(
    shop: Found<Shop>,
    provided: ProvidedDetails | undefined,
    fetched: MerchantDataFetched[],
  ): ResolvedDetails | Promise<ResolvedDetails> {
    const merchantUid = (shop.avro === undefined ? shop.snapshot?.merchantUid : shop.captured) ?? null
    let merchant: Found<Merchant> | Promise<Found<Merchant>>
    if (merchantUid === null || merchantUid === '') merchant = { snapshot: null, source: null }
    else if (provided?.merchant !== undefined && provided.merchant.uid === merchantUid) {
      const snapshot = merchantSnapshot(provided.merchant, merchantUid, this.#now())
      merchant = this.#accept('MERCHANT', merchantUid, this.#tables.merchants, snapshot, fetched)
    } else merchant = this.#resolve(this.#merchants, merchantUid, fetched)
    if (merchant instanceof Promise) return merchant.then((found) => resolvedOf(shop, found, merchantUid, fetched))
    return resolvedOf(shop, merchant, merchantUid, fetched)
  }

  /**
   * Called by the table reader for every record of the compacted topics: once the
   * refresher has stored what we fetched (or something newer, or a tombstone),
   * there is nothing left to hand over.
   */
  confirm(entity: 'SHOP' | 'MERCHANT', uid: string, fetchedAt: number | null): void {
    const key = `${entity}:${uid}`
    const pending = this.#pending.get(key)
    if (pending === undefined) return
    if (fetchedAt === null || fetchedAt >= pending.fetchedAt) this.#pending.delete(key)
  }

  /** Fetched snapshots not yet seen on the compacted topics. */
  get unconfirmed(): number {
    return this.#pending.size
  }

  /**
   * A snapshot that came with the find result is the freshest there is: it is
   * used, and stored and handed to the refresher only when the table did not
   * have the entity (a hit needs no write; the invalidation feed keeps it fresh).
   */
  #accept<T extends Shop | Merchant>(
    entity: 'SHOP' | 'MERCHANT',
    uid: string,
    table: SnapshotTable<T>,
    snapshot: T,
    fetched: MerchantDataFetched[],
  ): { snapshot: T; source: DetailSource } {
    const label = entity === 'SHOP' ? 'shops' : 'merchants'
    const known = table.get(uid) !== undefined
    if (entity === 'SHOP') this.#observe(!known)
    if (known) {
      this.#metrics?.tableHits.inc({ table: label })
      this.#reattachIfDue(entity, uid, fetched)
      return { snapshot, source: 'API' }
    }
    this.#metrics?.tableMisses.inc({
      table: label,
      reason: table.fetchedAtOf(uid) === undefined ? 'absent' : 'stale',
    })
    table.putFetched(snapshot)
    const event = this.#event(
      entity,
      uid,
      entity === 'SHOP' ? { shop: snapshot as Shop } : { merchant: snapshot as Merchant },
    )
    this.#remember(entity, uid, { snapshot, event })
    fetched.push(event)
    return { snapshot, source: 'API' }
  }

  /** A table hit without a promise (most records: no await per lookup), else the API through the single flight. */
  #resolve<T extends Shop | Merchant>(lane: Lane<T>, uid: string, fetched: MerchantDataFetched[]): Found<T> | Promise<Found<T>> {
    const hit = this.#tableHit(lane.table, uid)
    if (lane.entity === 'SHOP') this.#observe(hit === undefined)
    if (hit !== undefined) {
      this.#metrics?.tableHits.inc({ table: lane.label })
      this.#reattachIfDue(lane.entity, uid, fetched)
      return hit
    }
    this.#metrics?.tableMisses.inc({
      table: lane.label,
      reason: lane.table.fetchedAtOf(uid) === undefined ? 'absent' : 'stale',
    })
    return this.#fetchThrough(lane, uid, fetched)
  }

  async #fetchThrough<T extends Shop | Merchant>(lane: Lane<T>, uid: string, fetched: MerchantDataFetched[]): Promise<Found<T>> {
    const result = await lane.flight.run(uid, async () => {
      const got = await lane.fetch(uid)
      if (got.snapshot !== null) lane.table.putFetched(got.snapshot)
      else lane.table.delete(uid)
      this.#remember(lane.entity, uid, got)
      return got
    })
    fetched.push(result.event)
    return { snapshot: result.snapshot, source: result.snapshot === null ? null : 'API' }
  }

  #tableHit<T extends Shop | Merchant>(table: SnapshotTable<T>, uid: string): Found<T> | undefined {
    if (!this.#asAvro) {
      const snapshot = table.get(uid)
      return snapshot === undefined ? undefined : { snapshot, source: 'TABLE' }
    }
    const hit = table.getAvro(uid)
    return hit === undefined ? undefined : { snapshot: null, avro: hit.avro, captured: hit.captured, source: 'TABLE' }
  }

  #remember(entity: 'SHOP' | 'MERCHANT', uid: string, got: Fetch<Shop | Merchant>): void {
    const key = `${entity}:${uid}`
    this.#pending.delete(key)
    this.#pending.set(key, {
      event: got.event,
      fetchedAt: got.snapshot?.fetchedAt ?? 0,
      attachedAt: this.#now(),
    })
    if (this.#pending.size > this.#maxPending) {
      const oldest = this.#pending.keys().next().value
      if (oldest !== undefined) this.#pending.delete(oldest)
    }
  }

  #reattachIfDue(entity: 'SHOP' | 'MERCHANT', uid: string, fetched: MerchantDataFetched[]): void {
    if (this.#pending.size === 0) return
    const pending = this.#pending.get(`${entity}:${uid}`)
    if (pending === undefined) return
    const now = this.#now()
    if (now - pending.attachedAt < this.#republishAfterMs) return
    pending.attachedAt = now
    fetched.push(pending.event)
  }

  async #fetchShop(uid: string): Promise<Fetch<Shop>> {
    try {
      const api = await timed(this.#metrics, 'getShop', () => this.#client.getShop(uid), resultLabel)
      const snapshot = shopSnapshot(api, uid, this.#now())
      return { snapshot, event: this.#event('SHOP', uid, { shop: snapshot }) }
    } catch (err) {
      if (isEntityNotFound(err))
        return { snapshot: null, event: this.#event('SHOP', uid, { notFound: true }) }
      throw toSystemic(err)
    }
  }

  async #fetchMerchant(uid: string): Promise<Fetch<Merchant>> {
    try {
      const api = await timed(this.#metrics, 'getMerchant', () => this.#client.getMerchant(uid), resultLabel)
      const snapshot = merchantSnapshot(api, uid, this.#now())
      return { snapshot, event: this.#event('MERCHANT', uid, { merchant: snapshot }) }
    } catch (err) {
      if (isEntityNotFound(err))
        return { snapshot: null, event: this.#event('MERCHANT', uid, { notFound: true }) }
      throw toSystemic(err)
    }
  }

  #event(
    entityType: 'SHOP' | 'MERCHANT',
    uid: string,
    body: { shop?: Shop; merchant?: Merchant; notFound?: boolean },
  ): MerchantDataFetched {
    return {
      entityType,
      uid,
      shop: body.shop ?? null,
      merchant: body.merchant ?? null,
      notFound: body.notFound ?? false,
      fetchedBy: this.#instanceId,
    }
  }
}

function resolvedOf(
  shop: Found<Shop>,
  merchant: Found<Merchant>,
  merchantUid: string | null,
  fetched: MerchantDataFetched[],
): ResolvedDetails {
  const resolved: ResolvedDetails = {
    shop: shop.snapshot,
    merchant: merchant.snapshot,
    merchantUid: merchantUid === '' ? null : merchantUid,
    shopSource: shop.source,
    merchantSource: merchant.source,
    fetched,
  }
  if (shop.avro !== undefined) resolved.shopAvro = shop.avro
  if (merchant.avro !== undefined) resolved.merchantAvro = merchant.avro
  return resolved
}

function isEntityNotFound(err: unknown): boolean {
  if (!(err instanceof PipelineError) || err.code !== NOT_FOUND) return false
  const apiCode = (err as { apiError?: { code?: string } }).apiError?.code
  return apiCode !== ROUTE_NOT_FOUND
}

/**
 * The snapshot of an API answer (absent values as null, via the client's shared
 * mapping), keyed by the uid asked for even if the answer names another (a handle
 * would resolve to a uid; we only ever ask by uid).
 */
export function shopSnapshot(api: ApiShop, uid: string, fetchedAt: number): Shop {
  return { ...shopSnapshotData(api, uid), fetchedAt, invalidationItemId: null }
}

export function merchantSnapshot(api: ApiMerchant, uid: string, fetchedAt: number): Merchant {
  return { ...merchantSnapshotData(api, uid), fetchedAt, invalidationItemId: null }
}
