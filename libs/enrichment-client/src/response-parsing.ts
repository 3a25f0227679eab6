import { EnrichmentInvalidResponseError } from './errors.ts'
import type { InvalidationBatch, InvalidationItemRange, InvalidationPage, SuggestionReceipt } from './model.ts'

/**
 * Checks the parts of a response the client relies on (identifiers, cursors,
 * array lengths) and reports a contract breach with the operation and the path of
 * the offending member. Members the client does not rely on are passed through.
 * Find results, shops and merchants: find-parsing.ts, entity-parsing.ts.
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

function safeInt(ctx: ParseContext, value: unknown, path: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    fail(ctx, path, `not a non-negative integer (${JSON.stringify(value)})`)
  return n
}

function optionalInt(ctx: ParseContext, value: unknown, path: string): number | undefined {
  return value === undefined || value === null ? undefined : safeInt(ctx, value, path)
}

/**
 * One element of `data.batches`. The description names only `ids`; `level`,
 * `type` and `keys` are read when sent and left undefined when not (rule 6: any
 * response value may be absent). Keys that are not aligned with `ids` cannot
 * say which key belongs to which item, so they are dropped and reported in
 * `keysDropped` rather than failing the page: a page that fails is retried
 * forever and invalidates nothing.
 */
function parseInvalidationBatch(ctx: ParseContext, value: unknown, path: string): InvalidationBatch {
  if (!isObject(value)) fail(ctx, path, 'not an object')
  if (!Array.isArray(value.ids)) fail(ctx, `${path}.ids`, 'not an array')
  const ids = value.ids.map((id, i) => safeInt(ctx, id, `${path}.ids[${i}]`))
  let keys: (string | undefined)[] | undefined
  let keysDropped: string | undefined
  if (value.keys !== undefined && value.keys !== null) {
    if (!Array.isArray(value.keys) || value.keys.length !== ids.length)
      keysDropped = `${path}.keys is not an array aligned with ids`
    else keys = value.keys.map((k) => (typeof k === 'string' && k !== '' ? k : undefined))
  }
  const level = typeof value.level === 'string' && value.level !== '' ? value.level : undefined
  return {
    level,
    type: optionalString(ctx, value.type, `${path}.type`),
    ids,
    keys,
    ...(keysDropped === undefined ? {} : { keysDropped }),
  }
}

/**
 * One invalidation page. When `paging` lacks `lastId`/`hasMore` (the spec does
 * not define its members) they are derived: the cursor is the highest id seen
 * (or `fromId`), and more pages exist when the page came back full.
 */
export function parseInvalidationPage(
  ctx: ParseContext,
  body: unknown,
  request: { fromId: number; pageSize: number | undefined },
): InvalidationPage {
  if (!isObject(body) || !isObject(body.data)) fail(ctx, 'body.data', 'missing or not an object')
  const data = body.data
  const rawBatches = data.batches ?? []
  if (!Array.isArray(rawBatches)) fail(ctx, 'body.data.batches', 'not an array')
  const batches = rawBatches.map((b, i) => parseInvalidationBatch(ctx, b, `body.data.batches[${i}]`))
  const paging = isObject(body.paging) ? body.paging : {}
  const itemCount = batches.reduce((n, b) => n + b.ids.length, 0)
  const highestId = batches.reduce((max, b) => Math.max(max, ...b.ids), request.fromId)
  const lastId = optionalInt(ctx, paging.lastId, 'body.paging.lastId') ?? highestId
  let hasMore: boolean
  if (typeof paging.hasMore === 'boolean') hasMore = paging.hasMore
  else if (paging.hasMore === undefined || paging.hasMore === null) {
    const pageSize = optionalInt(ctx, paging.pageSize, 'body.paging.pageSize') ?? request.pageSize
    hasMore = pageSize !== undefined && itemCount >= pageSize
  } else fail(ctx, 'body.paging.hasMore', 'not a boolean')
  const toId = paging.toId === null ? null : optionalInt(ctx, paging.toId, 'body.paging.toId')
  return {
    currentTime: optionalString(ctx, data.currentTime, 'body.data.currentTime'),
    batches,
    paging: {
      fromId: optionalInt(ctx, paging.fromId, 'body.paging.fromId'),
      toId,
      pageSize: optionalInt(ctx, paging.pageSize, 'body.paging.pageSize'),
      lastId,
      hasMore,
    },
  }
}

export function parseItemRange(ctx: ParseContext, body: unknown): InvalidationItemRange {
  if (!isObject(body) || !isObject(body.data)) fail(ctx, 'body.data', 'missing or not an object')
  const data = body.data
  const fromId = safeInt(ctx, data.fromId, 'body.data.fromId')
  const toId = safeInt(ctx, data.toId, 'body.data.toId')
  if (toId < fromId) fail(ctx, 'body.data.toId', `below fromId (${toId} < ${fromId})`)
  return { fromId, toId, currentTime: optionalString(ctx, data.currentTime, 'body.data.currentTime') }
}

export function parseSuggestionReceipt(ctx: ParseContext, body: unknown): SuggestionReceipt {
  if (body === undefined || body === null) return { id: undefined }
  if (!isObject(body)) fail(ctx, 'body', 'not an object')
  return { id: optionalString(ctx, body.id, 'body.id') }
}
