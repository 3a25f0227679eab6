import { EnrichmentInvalidResponseError } from './errors.ts'
import type { SuggestionReceipt } from './model.ts'

/**
 * Checks the parts of a response the client relies on (identifiers, cursors,
 * array lengths) and reports a contract breach with the operation and the path of
 * the offending member. Members the client does not rely on are passed through.
 * Find results, shops and merchants: find-parsing.ts, entity-parsing.ts;
 * the invalidation feed: invalidation-parsing.ts.
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

export function parseSuggestionReceipt(ctx: ParseContext, body: unknown): SuggestionReceipt {
  if (body === undefined || body === null) return { id: undefined }
  if (!isObject(body)) fail(ctx, 'body', 'not an object')
  return { id: optionalString(ctx, body.id, 'body.id') }
}
