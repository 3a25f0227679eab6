import type { ContractDriftListener } from '@tep/observability'
import { EnrichmentInvalidResponseError } from './errors.ts'

/**
 * Reading answers of the lookups and of `/shops/{id}`, `/merchants/{id}` the
 * tolerant way (Postel's rule): the description shows only `handle` and
 * `shop.uid` of a find result and none of the attributes of shops and
 * merchants ("The list of attributes of the shop and merchant objects: not
 * shown"), so a member in another JSON type is normalised where the meaning is
 * plain (a number where an id or a text is modelled becomes its decimal text, a
 * numeric text where a number is modelled becomes the number), ignored where it
 * is not, and an unknown member is ignored. Every such deviation is reported to
 * the client's `onContractDrift` listener; only what the pipeline cannot work
 * without fails the answer, with the path of the member.
 */

/** Where an answer is read: the request it answers, and where deviations are reported. */
export interface ReadContext {
  operation: string
  method: string
  url: string
  status: number
  drift?: AnswerDrift
}

/** Most distinct unknown member names reported by name; later ones are reported as `*` (they become metric labels). */
export const MAX_UNKNOWN_MEMBER_NAMES = 32

const PLAIN_NAME = /^[A-Za-z0-9_]{1,40}$/

/**
 * Reports tolerated deviations of the enrichment API's answers as ContractDrift
 * (api `enrichment`). Labels hold member paths without array indexes and never a
 * value; unknown member names are capped so that an API sending ever new names
 * cannot grow the metric without bound.
 */
export class AnswerDrift {
  readonly #listener: ContractDriftListener
  readonly #unknownNames = new Set<string>()

  constructor(listener: ContractDriftListener) {
    this.#listener = listener
  }

  report(operation: string, path: string, kind: string, detail?: string): void {
    try {
      this.#listener({
        api: 'enrichment',
        operation: operation.replace(/^enrichment\./, ''),
        field: fieldLabel(path),
        kind,
        ...(detail === undefined ? {} : { detail }),
      })
    } catch {
      // A listener that throws must not turn a tolerated answer into a failed lookup.
    }
  }

  unknownMember(operation: string, parentPath: string, name: string): void {
    let label = PLAIN_NAME.test(name) ? name : '*'
    if (label !== '*' && !this.#unknownNames.has(label)) {
      if (this.#unknownNames.size >= MAX_UNKNOWN_MEMBER_NAMES) label = '*'
      else this.#unknownNames.add(label)
    }
    this.report(operation, `${parentPath}.${label}`, 'unknown-field')
  }
}

/** `body[3].shop.uid` -> `shop.uid`, `body` -> `(body)`: the member, not where it sat in this answer. */
export function fieldLabel(path: string): string {
  const label = path.replace(/\[\d+\]/g, '').replace(/^body\.?/, '')
  return label === '' ? '(body)' : label
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function fail(ctx: ReadContext, path: string, problem: string): never {
  throw new EnrichmentInvalidResponseError(
    `${ctx.operation}: ${ctx.method} ${ctx.url} returned ${ctx.status} with ${path} ${problem}`,
    { operation: ctx.operation, method: ctx.method, url: ctx.url, status: ctx.status },
  )
}

export function drift(ctx: ReadContext, path: string, kind: string, detail?: string): void {
  ctx.drift?.report(ctx.operation, path, kind, detail)
}

/** Reports every member of `value` that is not in `known`; the members stay where they are. */
export function reportUnknownMembers(
  ctx: ReadContext,
  value: Record<string, unknown>,
  known: ReadonlySet<string>,
  path: string,
): void {
  if (ctx.drift === undefined) return
  for (const name in value) if (!known.has(name)) ctx.drift.unknownMember(ctx.operation, path, name)
}

/**
 * An identifier (uid, handle, merchantUid). A string is kept as sent; a number
 * is the same id in another JSON type and is read as its decimal text. Absent,
 * null or empty is `undefined` (rule 6). Anything else cannot be an id:
 * `unusable: 'fail'` makes the answer invalid, `'ignore'` reads it as absent;
 * both report it.
 */
export function readId(
  ctx: ReadContext,
  value: unknown,
  path: string,
  unusable: 'fail' | 'ignore',
): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number' && Number.isFinite(value)) {
    drift(ctx, path, 'type', 'number, read as its decimal text')
    return String(value)
  }
  if (unusable === 'fail') fail(ctx, path, `is ${jsonType(value)}, not an identifier (a string or a number)`)
  drift(ctx, path, 'type-ignored', `${jsonType(value)}, not an identifier; ignored`)
  return undefined
}

/** A text member: a number or boolean becomes its text, an object or array is ignored. */
export function readText(ctx: ReadContext, value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number' || typeof value === 'boolean') {
    drift(ctx, path, 'type', `${typeof value}, read as text`)
    return String(value)
  }
  drift(ctx, path, 'type-ignored', `${jsonType(value)}, not a text; ignored`)
  return undefined
}

const NUMERIC_TEXT = /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/

/** A number member: a numeric text becomes the number, anything else is ignored. */
export function readNumber(ctx: ReadContext, value: unknown, path: string): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string' && NUMERIC_TEXT.test(value)) {
    drift(ctx, path, 'type', 'string, read as a number')
    return Number(value)
  }
  drift(ctx, path, 'type-ignored', `${jsonType(value)}, not a number; ignored`)
  return undefined
}

/** A list of texts: elements read as texts (unusable ones left out); a list in another type is ignored. */
export function readTextList(ctx: ReadContext, value: unknown, path: string): string[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) {
    drift(ctx, path, 'type-ignored', `${jsonType(value)}, not an array; ignored`)
    return undefined
  }
  const out: string[] = []
  for (let i = 0; i < value.length; i++) {
    const text = readText(ctx, value[i], `${path}[${i}]`)
    if (text !== undefined) out.push(text)
  }
  return out
}

/** A nested object: absent stays absent, another type is ignored and reported. */
export function readObject(ctx: ReadContext, value: unknown, path: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined
  if (isObject(value)) return value
  drift(ctx, path, 'type-ignored', `${jsonType(value)}, not an object; ignored`)
  return undefined
}

/** Sets `key` only when the value is known, so that an absent member stays absent (`'url' in shop` is false). */
export function put<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value
}
