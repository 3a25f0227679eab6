import { parseMerchant, parseShop, SHOP_MEMBERS } from './entity-parsing.ts'
import type {
  BatchEntryResult,
  CompleteBatchEntryResult,
  CompleteFindResult,
  FindResult,
  InvalidEntryResult,
} from './model.ts'
import {
  drift,
  fail,
  isObject,
  jsonType,
  readId,
  readText,
  reportUnknownMembers,
  type ReadContext,
} from './tolerant-reading.ts'

/**
 * Find results of the lookups, read tolerantly (tolerant-reading.ts). The
 * description gives a find result `handle` and "the nested `shop` with `uid`";
 * the pipeline cannot work without that shop, so a `shop` that is not an
 * object, or whose `uid` is not an id in any JSON type, makes the answer
 * invalid, naming the member. A numeric `uid` or `handle` is the id as a
 * number: read as its decimal text, the same way as in `/shops/{id}`.
 */

const FIND_MEMBERS: ReadonlySet<string> = new Set(['handle', 'shop', 'result'])
const COMPLETE_FIND_MEMBERS: ReadonlySet<string> = new Set(['handle', 'shop', 'result', 'merchant'])
const INVALID_ENTRY_MEMBERS: ReadonlySet<string> = new Set(['result', 'error', 'handle'])
const ERROR_MEMBERS: ReadonlySet<string> = new Set(['code', 'message', 'parameter'])

function findObject(ctx: ReadContext, value: unknown, path: string): Record<string, unknown> {
  if (!isObject(value)) fail(ctx, path, `is ${jsonType(value)}, not a find result object`)
  return value
}

function readHandle(ctx: ReadContext, value: Record<string, unknown>, path: string): string | undefined {
  if (value.handle === undefined) drift(ctx, `${path}.handle`, 'absent')
  return readId(ctx, value.handle, `${path}.handle`, 'ignore')
}

/**
 * The found shop's uid, or undefined when the answer has no shop (not found,
 * whatever `result` says; rule 6) or a shop without uid (nothing identifies it).
 */
function foundShopUid(ctx: ReadContext, body: Record<string, unknown>, path: string): string | undefined {
  const shop = body.shop
  if (shop === undefined || shop === null) return undefined
  const shopPath = `${path}.shop`
  if (!isObject(shop)) fail(ctx, shopPath, `is ${jsonType(shop)}, not an object holding the found shop's uid`)
  const uid = readId(ctx, shop.uid, `${shopPath}.uid`, 'fail')
  if (uid === undefined) drift(ctx, `${shopPath}.uid`, 'absent', 'a shop without uid is read as not found')
  return uid
}

/** A find result; a missing `shop` (or shop without uid) means not found, whatever `result` says. */
export function parseFindResult(ctx: ReadContext, value: unknown, path = 'body'): FindResult {
  const body = findObject(ctx, value, path)
  reportUnknownMembers(ctx, body, FIND_MEMBERS, path)
  const handle = readHandle(ctx, body, path)
  const shopUid = foundShopUid(ctx, body, path)
  if (shopUid === undefined) return { status: 'notFound', handle }
  // A plain find result may carry more of the shop than its uid; only unknown names are drift.
  reportUnknownMembers(ctx, body.shop as Record<string, unknown>, SHOP_MEMBERS, `${path}.shop`)
  return { status: 'found', handle, shopUid }
}

/** A `complete` find result: found ones carry the shop and, when identifiable, its merchant. */
export function parseCompleteFindResult(ctx: ReadContext, value: unknown, path = 'body'): CompleteFindResult {
  const body = findObject(ctx, value, path)
  reportUnknownMembers(ctx, body, COMPLETE_FIND_MEMBERS, path)
  const handle = readHandle(ctx, body, path)
  const shopUid = foundShopUid(ctx, body, path)
  if (shopUid === undefined) return { status: 'notFound', handle }
  const shop = parseShop(ctx, body.shop, `${path}.shop`, shopUid)
  // A merchant without `uid` is the shop's merchant when the shop names one; otherwise
  // nothing identifies it and it is left out, as is a merchant in another JSON type:
  // the merchant's details can still be read by the shop's merchantUid.
  const merchantPath = `${path}.merchant`
  const raw = body.merchant
  let merchant
  if (raw === undefined || raw === null) merchant = undefined
  else if (!isObject(raw)) {
    drift(ctx, merchantPath, 'type-ignored', `${jsonType(raw)}, not a merchant object; ignored`)
  } else {
    const ownUid = readId(ctx, raw.uid, `${merchantPath}.uid`, 'ignore')
    const uid = ownUid ?? shop.merchantUid
    if (ownUid === undefined)
      drift(ctx, `${merchantPath}.uid`, 'absent', uid === undefined ? 'nothing identifies the merchant; left out' : "the shop's merchantUid stands in")
    if (uid !== undefined) merchant = parseMerchant(ctx, { ...raw, uid }, merchantPath)
  }
  return { status: 'found', handle, shopUid, shop, merchant }
}

function parseInvalidEntry(ctx: ReadContext, value: Record<string, unknown>, path: string): InvalidEntryResult {
  reportUnknownMembers(ctx, value, INVALID_ENTRY_MEMBERS, path)
  const error = isObject(value.error) ? value.error : {}
  if (!isObject(value.error)) drift(ctx, `${path}.error`, value.error === undefined ? 'absent' : 'type-ignored')
  else reportUnknownMembers(ctx, error, ERROR_MEMBERS, `${path}.error`)
  return {
    status: 'invalid',
    error: {
      code: readText(ctx, error.code, `${path}.error.code`),
      message: readText(ctx, error.message, `${path}.error.message`),
      parameter: readText(ctx, error.parameter, `${path}.error.parameter`),
    },
  }
}

/**
 * The batch answer: an array in request order (or `{data: [...]}`, reported and
 * told to `onWrapped`), with exactly one element per request entry: results are
 * matched by position, so a length that differs cannot be tolerated.
 */
function batchElements(ctx: ReadContext, body: unknown, expected: number, onWrapped: () => void): unknown[] {
  let list: unknown[]
  if (Array.isArray(body)) list = body
  else if (isObject(body) && Array.isArray(body.data)) {
    drift(ctx, 'body', 'wrapped', 'the array came as {"data": [...]}')
    onWrapped()
    list = body.data
  } else fail(ctx, 'body', 'neither an array nor {"data": [...]}')
  if (list.length !== expected)
    fail(ctx, 'body', `holding ${list.length} results for ${expected} request entries (results are matched by position)`)
  return list
}

export function parseBatch(ctx: ReadContext, body: unknown, expected: number, onWrapped: () => void): BatchEntryResult[] {
  return batchElements(ctx, body, expected, onWrapped).map((entry, i) => {
    const path = `body[${i}]`
    if (isObject(entry) && entry.result === 'invalid') return parseInvalidEntry(ctx, entry, path)
    return parseFindResult(ctx, entry, path)
  })
}

export function parseCompleteBatch(
  ctx: ReadContext,
  body: unknown,
  expected: number,
  onWrapped: () => void,
): CompleteBatchEntryResult[] {
  return batchElements(ctx, body, expected, onWrapped).map((entry, i) => {
    const path = `body[${i}]`
    if (isObject(entry) && entry.result === 'invalid') return parseInvalidEntry(ctx, entry, path)
    return parseCompleteFindResult(ctx, entry, path)
  })
}
