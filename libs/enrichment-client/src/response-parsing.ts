import { EnrichmentInvalidResponseError } from './errors.ts'
import type {
  BatchEntryResult,
  CompleteBatchEntryResult,
  CompleteFindResult,
  FindResult,
  InvalidEntryResult,
  Merchant,
  Shop,
  SuggestionReceipt,
} from './model.ts'

/**
 * Checks the parts of a response the client relies on (identifiers, cursors,
 * array lengths) and reports a contract breach with the operation and the path of
 * the offending member. Members the client does not rely on are passed through.
 */
export interface ParseContext {
  operation: string
  method: string
  url: string
  status: number
}

function fail(ctx: ParseContext, path: string, problem: string): never {
  throw new EnrichmentInvalidResponseError(
    `${ctx.operation}: ${ctx.method} ${ctx.url} returned ${ctx.status} with ${path} ${problem}`,
    {
      operation: ctx.operation,
      method: ctx.method,
      url: ctx.url,
      status: ctx.status,
    },
  )
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function optionalString(ctx: ParseContext, value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') fail(ctx, path, `not a string (${typeof value})`)
  return value
}

function requiredString(ctx: ParseContext, value: unknown, path: string): string {
  if (typeof value !== 'string' || value === '') fail(ctx, path, 'missing or not a non-empty string')
  return value
}

/** Whether an answer named an identifier: rule 6 lets it be absent (or, defensively, null or empty). */
function absentId(value: unknown): boolean {
  return value === undefined || value === null || value === ''
}

/**
 * A shop answer. Rule 6 ("any response value may be absent") covers `uid` too:
 * when the caller knows which shop it asked for (`knownUid`), an answer without
 * `uid` is that shop, and the known uid stands in; without one it is a breach.
 */
export function parseShop(ctx: ParseContext, value: unknown, path = 'body', knownUid?: string): Shop {
  if (!isObject(value)) fail(ctx, path, 'not a shop object')
  optionalString(ctx, value.merchantUid, `${path}.merchantUid`)
  if (absentId(value.uid) && knownUid !== undefined) return { ...value, uid: knownUid } as Shop
  requiredString(ctx, value.uid, `${path}.uid`)
  return value as Shop
}

/** A merchant answer; as `parseShop`, `knownUid` stands in for an absent `uid`. */
export function parseMerchant(ctx: ParseContext, value: unknown, path = 'body', knownUid?: string): Merchant {
  if (!isObject(value)) fail(ctx, path, 'not a merchant object')
  if (absentId(value.uid) && knownUid !== undefined) return { ...value, uid: knownUid } as Merchant
  requiredString(ctx, value.uid, `${path}.uid`)
  return value as Merchant
}

/** A find result; a missing `shop` (or shop without uid) means not found, whatever `result` says. */
export function parseFindResult(ctx: ParseContext, value: unknown, path = 'body'): FindResult {
  if (!isObject(value)) fail(ctx, path, 'not a find result object')
  const handle = optionalString(ctx, value.handle, `${path}.handle`) || undefined
  const shop = value.shop
  if (isObject(shop) && typeof shop.uid === 'string' && shop.uid !== '')
    return { status: 'found', handle, shopUid: shop.uid }
  return { status: 'notFound', handle }
}

export function parseCompleteFindResult(
  ctx: ParseContext,
  value: unknown,
  path = 'body',
): CompleteFindResult {
  const base = parseFindResult(ctx, value, path)
  if (base.status === 'notFound') return base
  const body = value as Record<string, unknown>
  const shop = parseShop(ctx, body.shop, `${path}.shop`)
  // A merchant without `uid` is the shop's merchant when the shop names one; otherwise
  // nothing identifies it, and it is left out (the result stays a per-record outcome).
  const merchantUid = typeof shop.merchantUid === 'string' && shop.merchantUid !== '' ? shop.merchantUid : undefined
  const merchant =
    body.merchant === undefined ||
    body.merchant === null ||
    (isObject(body.merchant) && absentId(body.merchant.uid) && merchantUid === undefined)
      ? undefined
      : parseMerchant(ctx, body.merchant, `${path}.merchant`, merchantUid)
  return { ...base, shop, merchant }
}

function parseInvalidEntry(
  ctx: ParseContext,
  value: Record<string, unknown>,
  path: string,
): InvalidEntryResult {
  const error = isObject(value.error) ? value.error : {}
  return {
    status: 'invalid',
    error: {
      code: optionalString(ctx, error.code, `${path}.error.code`),
      message: optionalString(ctx, error.message, `${path}.error.message`),
      parameter: optionalString(ctx, error.parameter, `${path}.error.parameter`),
    },
  }
}

/**
 * The batch answer: an array in request order (or, defensively, `{data: [...]}`),
 * with exactly one element per request entry. `onWrapped` is told when the
 * wrapper form was seen, so the caller can log it.
 */
function batchElements(ctx: ParseContext, body: unknown, expected: number, onWrapped: () => void): unknown[] {
  let elements: unknown
  if (Array.isArray(body)) elements = body
  else if (isObject(body) && Array.isArray(body.data)) {
    onWrapped()
    elements = body.data
  } else fail(ctx, 'body', 'neither an array nor {"data": [...]}')
  const list = elements as unknown[]
  if (list.length !== expected)
    fail(
      ctx,
      'body',
      `holding ${list.length} results for ${expected} request entries (results are matched by position)`,
    )
  return list
}

export function parseBatch(
  ctx: ParseContext,
  body: unknown,
  expected: number,
  onWrapped: () => void,
): BatchEntryResult[] {
  return batchElements(ctx, body, expected, onWrapped).map((entry, i) => {
    const path = `body[${i}]`
    if (isObject(entry) && entry.result === 'invalid') return parseInvalidEntry(ctx, entry, path)
    return parseFindResult(ctx, entry, path)
  })
}

export function parseCompleteBatch(
  ctx: ParseContext,
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

export function parseSuggestionReceipt(ctx: ParseContext, body: unknown): SuggestionReceipt {
  if (body === undefined || body === null) return { id: undefined }
  if (!isObject(body)) fail(ctx, 'body', 'not an object')
  return { id: optionalString(ctx, body.id, 'body.id') }
}
