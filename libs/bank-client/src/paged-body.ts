import type { BankResult, BankTransport } from './bank-transport.ts'
import { expectShape, isObject } from './bank-transport.ts'

const REQUIRED = ['pageNumber', 'pageCount'] as const
const OPTIONAL = ['pageSize', 'nextPage'] as const

/** A whole number given as a JSON number, or as a string of digits (read as that number). */
function wholeNumber(v: unknown): { value: number; fromString: boolean } | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return { value: v, fromString: false }
  if (typeof v === 'string' && /^\d{1,15}$/.test(v)) return { value: Number(v), fromString: true }
  return undefined
}

/**
 * One page of a paged list (`listKey` an array; COBS `pageNumber`, `pageCount`, optional
 * `pageSize`, `nextPage`). The description names neither the paging fields nor their types,
 * so a number sent as a string of digits is read as that number and reported as drift;
 * anything else that cannot be followed is BANK_PROTOCOL_ERROR, as before.
 */
export function pagedBody<T extends object>(
  transport: BankTransport,
  res: BankResult<unknown>,
  operation: string,
  listKey: string,
  what: string,
): T {
  const body = expectShape<Record<string, unknown>>(res, operation, what, (b) => {
    if (!isObject(b) || !Array.isArray(b[listKey])) return false
    if (!REQUIRED.every((k) => wholeNumber(b[k]) !== undefined)) return false
    return OPTIONAL.every((k) => b[k] === undefined || b[k] === null || wholeNumber(b[k]) !== undefined)
  })
  let out = body
  for (const k of [...REQUIRED, ...OPTIONAL]) {
    const n = wholeNumber(body[k])
    if (n?.fromString !== true) continue
    if (out === body) out = { ...body }
    out[k] = n.value
    transport.reportDrift({ operation, field: k, kind: 'type', detail: 'numeric string' })
  }
  return out as T
}
