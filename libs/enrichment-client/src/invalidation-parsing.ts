import type { ContractDriftListener } from '@tep/observability'
import { EnrichmentInvalidResponseError } from './errors.ts'
import type { InvalidationBatch, InvalidationItemRange, InvalidationPage } from './model.ts'
import type { ParseContext } from './response-parsing.ts'

/**
 * Tolerant readers of `/v5/invalidations` and `/v5/invalidations/item/range`
 * (Postel's rule). The description types only `ids` ("numeric identifiers of
 * invalidated items") and says "The types of `currentTime` and of the other
 * fields of `batches` elements, and the fields of `paging`: not shown". So
 * every other field is accepted in any JSON type and normalised, unknown
 * fields are ignored, and each such deviation from this client's model is
 * reported to `onDrift` (once per field and kind per answer). Only what the
 * pipeline cannot work without (the `ids` array of every batch, its elements
 * as non-negative integers) makes a page invalid, with the field's path.
 */

const OPERATION = 'invalidations'

const KNOWN = {
  body: ['data', 'paging'],
  data: ['currentTime', 'batches'],
  batch: ['ids', 'level', 'type', 'keys'],
  paging: ['fromId', 'toId', 'pageSize', 'lastId', 'hasMore'],
  range: ['fromId', 'toId', 'currentTime'],
} as const

/** Collects one answer's drifts and reports each (field, kind) once. */
class DriftNotes {
  readonly #seen = new Map<string, { field: string; kind: string; detail: string | undefined }>()
  note(field: string, kind: string, detail?: string): void {
    const key = `${field} ${kind}`
    if (!this.#seen.has(key)) this.#seen.set(key, { field, kind, detail })
  }
  flush(listener: ContractDriftListener | undefined): void {
    if (listener === undefined) return
    for (const { field, kind, detail } of this.#seen.values())
      listener({ api: 'enrichment', operation: OPERATION, field, kind, ...(detail === undefined ? {} : { detail }) })
  }
}

function fail(ctx: ParseContext, path: string, problem: string): never {
  throw new EnrichmentInvalidResponseError(
    `${ctx.operation}: ${ctx.method} ${ctx.url} returned ${ctx.status} with ${path} ${problem}`,
    { operation: ctx.operation, method: ctx.method, url: ctx.url, status: ctx.status, details: { field: path } },
  )
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function jsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

function absent(value: unknown): boolean {
  return value === undefined || value === null
}

function unknownFields(notes: DriftNotes, value: Record<string, unknown>, known: readonly string[], field: string): void {
  const extra = Object.keys(value).filter((k) => !known.includes(k))
  if (extra.length > 0) notes.note(field, 'unknown-field', extra.slice(0, 10).join(','))
}

/** A non-negative safe integer, from a number or a numeric string; undefined when neither. */
function readInt(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined
}

/** An untyped integer field: a numeric string is drift; anything unreadable is drift and treated as absent. */
function tolerantInt(notes: DriftNotes, value: unknown, field: string, reportAbsent = false): number | undefined {
  if (absent(value)) {
    if (reportAbsent) notes.note(field, 'absent')
    return undefined
  }
  const n = readInt(value)
  if (typeof value !== 'number' || n === undefined)
    notes.note(field, n === undefined ? 'unreadable' : 'type', jsonType(value))
  return n
}

const TRUE = new Set(['true', '1', 'yes'])
const FALSE = new Set(['false', '0', 'no'])

/** `hasMore` in any JSON type: booleans as sent, "true"/"false"/1/0 read as such; anything else undefined. */
function tolerantBoolean(notes: DriftNotes, value: unknown, field: string): boolean | undefined {
  if (typeof value === 'boolean') return value
  if (absent(value)) {
    notes.note(field, 'absent')
    return undefined
  }
  const text = typeof value === 'string' || typeof value === 'number' ? String(value).trim().toLowerCase() : undefined
  const read = text === undefined ? undefined : TRUE.has(text) ? true : FALSE.has(text) ? false : undefined
  notes.note(field, read === undefined ? 'unreadable' : 'type', jsonType(value))
  return read
}

/** A time "kept as received": a string as is, a number as its JSON text; other types dropped. */
function tolerantTime(notes: DriftNotes, value: unknown, field: string): string | undefined {
  if (typeof value === 'string') return value
  if (absent(value)) {
    notes.note(field, 'absent')
    return undefined
  }
  notes.note(field, typeof value === 'number' ? 'type' : 'unreadable', jsonType(value))
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined
}

/** A label-like field (`level`, `type`): a string as is, a number or boolean as its text, else absent. */
function tolerantLabel(notes: DriftNotes, value: unknown, field: string): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value
  if (absent(value)) return undefined
  const label = typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined
  notes.note(field, label === undefined ? 'unreadable' : 'type', jsonType(value))
  return label
}

/**
 * One element of `data.batches`. `ids` is the one member described; `level`,
 * `type` and `keys` are this project's model, each undefined when not sent
 * (see docs/DECISIONS.md, "Invalidation batches that carry only ids"). Keys not
 * aligned with `ids` are dropped with a note rather than failing the page.
 */
function parseBatch(ctx: ParseContext, notes: DriftNotes, value: unknown, path: string): InvalidationBatch {
  if (!isObject(value)) fail(ctx, path, `not an object (${jsonType(value)})`)
  if (!Array.isArray(value.ids)) fail(ctx, `${path}.ids`, `not an array (${jsonType(value.ids)})`)
  const ids = value.ids.map((id, i) => {
    const n = readInt(id)
    if (n === undefined) fail(ctx, `${path}.ids[${i}]`, `not a non-negative integer (${JSON.stringify(id)})`)
    if (typeof id !== 'number') notes.note('data.batches[].ids[]', 'type', jsonType(id))
    return n
  })
  unknownFields(notes, value, KNOWN.batch, 'data.batches[]')
  let keys: (string | undefined)[] | undefined
  let keysDropped: string | undefined
  if (!absent(value.keys)) {
    if (!Array.isArray(value.keys) || value.keys.length !== ids.length)
      keysDropped = `${path}.keys is not an array aligned with ids`
    else
      keys = value.keys.map((k) => {
        if (typeof k === 'string') return k === '' ? undefined : k
        if (typeof k === 'number') {
          notes.note('data.batches[].keys[]', 'type', 'number')
          return String(k)
        }
        return undefined
      })
  }
  return {
    level: tolerantLabel(notes, value.level, 'data.batches[].level'),
    type: tolerantLabel(notes, value.type, 'data.batches[].type'),
    ids,
    keys,
    ...(keysDropped === undefined ? {} : { keysDropped }),
  }
}

/**
 * One invalidation page. When `paging` lacks a usable `lastId`/`hasMore` they
 * are derived: the cursor is the highest id seen (or `fromId`), and more pages
 * exist when the page came back full.
 */
export function parseInvalidationPage(
  ctx: ParseContext,
  body: unknown,
  request: { fromId: number; pageSize: number | undefined },
  onDrift?: ContractDriftListener,
): InvalidationPage {
  const notes = new DriftNotes()
  if (!isObject(body)) fail(ctx, 'body', `not an object (${jsonType(body)})`)
  let data: Record<string, unknown>
  if (isObject(body.data)) data = body.data
  else if (absent(body.data) && Array.isArray(body.batches)) {
    // `batches` beside `paging` instead of inside `data` (the v4 layout): read where it is.
    notes.note('data', 'shape', 'batches at the top level')
    data = body
  } else fail(ctx, 'body.data', `missing or not an object (${jsonType(body.data)})`)
  if (data !== body) {
    unknownFields(notes, body, KNOWN.body, 'body')
    unknownFields(notes, data, KNOWN.data, 'data')
  }
  let rawBatches: unknown[]
  if (Array.isArray(data.batches)) rawBatches = data.batches
  else if (absent(data.batches)) {
    notes.note('data.batches', 'absent')
    rawBatches = []
  } else fail(ctx, 'body.data.batches', `not an array (${jsonType(data.batches)})`)
  const batches = rawBatches.map((b, i) => parseBatch(ctx, notes, b, `body.data.batches[${i}]`))
  let paging: Record<string, unknown> = {}
  if (isObject(body.paging)) {
    paging = body.paging
    unknownFields(notes, paging, KNOWN.paging, 'paging')
  } else notes.note('paging', absent(body.paging) ? 'absent' : 'unreadable', jsonType(body.paging))
  const itemCount = batches.reduce((n, b) => n + b.ids.length, 0)
  const highestId = batches.reduce((max, b) => Math.max(max, ...b.ids), request.fromId)
  const pageSize = tolerantInt(notes, paging.pageSize, 'paging.pageSize')
  const lastId = tolerantInt(notes, paging.lastId, 'paging.lastId', true) ?? highestId
  const size = pageSize ?? request.pageSize
  const hasMore = tolerantBoolean(notes, paging.hasMore, 'paging.hasMore') ?? (size !== undefined && itemCount >= size)
  const toId = paging.toId === null ? null : tolerantInt(notes, paging.toId, 'paging.toId')
  const page: InvalidationPage = {
    currentTime: tolerantTime(notes, data.currentTime, 'data.currentTime'),
    batches,
    paging: { fromId: tolerantInt(notes, paging.fromId, 'paging.fromId'), toId, pageSize, lastId, hasMore },
  }
  notes.flush(onDrift)
  return page
}

/**
 * The item/range answer: `data.fromId` and `data.toId` as modelled, or the same
 * two at the top level. An answer without a readable `fromId` is invalid,
 * naming the field: the poller then falls back (its README) instead of guessing.
 */
export function parseItemRange(ctx: ParseContext, body: unknown, onDrift?: ContractDriftListener): InvalidationItemRange {
  const notes = new DriftNotes()
  if (!isObject(body)) fail(ctx, 'body', `not an object (${jsonType(body)})`)
  let data: Record<string, unknown>
  if (isObject(body.data)) data = body.data
  else if (absent(body.data) && !absent(body.fromId)) {
    notes.note('item/range.data', 'shape', 'fromId at the top level')
    data = body
  } else fail(ctx, 'body.data', `missing or not an object (${jsonType(body.data)})`)
  if (data !== body) unknownFields(notes, data, KNOWN.range, 'item/range.data')
  const fromId = tolerantInt(notes, data.fromId, 'item/range.data.fromId')
  if (fromId === undefined) fail(ctx, 'body.data.fromId', `missing or not a non-negative integer (${JSON.stringify(data.fromId)})`)
  let toId = tolerantInt(notes, data.toId, 'item/range.data.toId', true) ?? fromId
  if (toId < fromId) {
    notes.note('item/range.data.toId', 'inconsistent', 'below fromId')
    toId = fromId
  }
  const range = { fromId, toId, currentTime: tolerantTime(notes, data.currentTime, 'item/range.data.currentTime') }
  notes.flush(onDrift)
  return range
}
