/**
 * What the client returns. The spec says any response value may be absent, so
 * everything beyond the identifiers is optional, and open sets (tags, types,
 * category names) are plain strings.
 */

export interface Category {
  name?: string
  logo?: string
}

export interface Shop {
  uid: string
  /** `bricks` (physical), `online`, ... (open set). */
  type?: string
  merchantUid?: string
  tags?: string[]
  category?: Category
  location?: {
    address?: {
      street?: string
      city?: string
      zip?: string
      country?: string
      areas?: Record<string, string>
    }
    coordinates?: { type?: string; lat?: number; long?: number }
  }
  url?: string
  googlePlaceId?: string
  /** Members this client does not model are kept. */
  [member: string]: unknown
}

export interface Merchant {
  uid: string
  name?: string
  logo?: string
  url?: string
  category?: Category
  tags?: string[]
  [member: string]: unknown
}

/**
 * Outcome of a lookup. `notFound` covers `result: "notFound"`, a result without a
 * `shop` (whatever `result` says) and a 404 answer. `handle` is kept when the API
 * sent one: a later handle-level invalidation may attach a shop to it.
 */
export type FindResult =
  | { status: 'found'; handle: string | undefined; shopUid: string }
  | { status: 'notFound'; handle: string | undefined }

/** Outcome of a `complete` lookup: a found result carries the full shop and, when sent, its merchant. */
export type CompleteFindResult =
  | {
      status: 'found'
      handle: string | undefined
      shopUid: string
      shop: Shop
      merchant: Merchant | undefined
    }
  | { status: 'notFound'; handle: string | undefined }

/** A batch entry the API refused on its own (the rest of the batch resolved). */
export interface InvalidEntryResult {
  status: 'invalid'
  error: { code: string | undefined; message: string | undefined; parameter: string | undefined }
}

export type BatchEntryResult = FindResult | InvalidEntryResult
export type CompleteBatchEntryResult = CompleteFindResult | InvalidEntryResult

export type InvalidationLevel = 'shop' | 'merchant' | 'handle'

/**
 * One element of `data.batches`. The description names only `ids`; the other
 * members are this project's model of what the service adds, each undefined
 * when not sent (see docs/DECISIONS.md, "Invalidation batches that carry only ids").
 */
export interface InvalidationBatch {
  /** `shop`, `merchant`, `handle` (open set); undefined when not sent. */
  level: string | undefined
  /** `update`, `delete`, `remap` (open set). */
  type: string | undefined
  /** Invalidation item ids (numeric). */
  ids: number[]
  /**
   * Entity key of each item (shop uid, merchant uid or handle), aligned with
   * `ids`, when sent; an element is undefined where that item's key was
   * absent or empty.
   */
  keys: (string | undefined)[] | undefined
  /** Set when `keys` was sent but could not be used (not aligned with `ids`): what was wrong. */
  keysDropped?: string
}

export interface InvalidationPaging {
  fromId: number | undefined
  toId: number | null | undefined
  pageSize: number | undefined
  /** Cursor for the next call (exclusive `fromId`). */
  lastId: number
  hasMore: boolean
}

export interface InvalidationPage {
  currentTime: string | undefined
  batches: InvalidationBatch[]
  paging: InvalidationPaging
}

export interface InvalidationItemRange {
  /** The id just before the first item at or after the moment asked for: use as the exclusive `fromId`. */
  fromId: number
  /** The newest item id. */
  toId: number
  currentTime: string | undefined
}

export interface Suggestion {
  /** The lookup as sent and the answer received. */
  original?: { request?: Record<string, unknown>; response?: Record<string, unknown> }
  /** The identifiers the client holds for the record. */
  current?: { shopUid?: string; merchantUid?: string; handle?: string }
  /** Free text: what is wrong and the correct value. */
  suggestion: string
  /** `partner` (your staff) or `user` (your end customer). */
  source: 'partner' | 'user'
}

export interface SuggestionReceipt {
  id: string | undefined
}
