import { BankApiError } from '../errors.ts'

export interface Page<T> {
  pageNumber: number
  pageCount: number
  pageSize: number
  nextPage?: number
  totalCount: number
  items: T[]
}

/**
 * COBS paging: 0-based pages, `pageCount` 0 for an empty result (page 0 is then
 * still answered, with an empty list), `nextPage` only when a further page exists,
 * and a page beyond the last one refused with 400 PAGE_NOT_FOUND.
 */
export function paginate<T>(items: readonly T[], page: number, pageSize: number): Page<T> {
  const totalCount = items.length
  const pageCount = Math.ceil(totalCount / pageSize)
  if (page > 0 && page >= pageCount) {
    throw new BankApiError(400, { error: 'PAGE_NOT_FOUND', scope: 'page', parameters: { PAGE_COUNT: String(pageCount) }, message: `page ${page} does not exist; there are ${pageCount} pages` })
  }
  const slice = items.slice(page * pageSize, page * pageSize + pageSize)
  return { pageNumber: page, pageCount, pageSize, ...(page + 1 < pageCount ? { nextPage: page + 1 } : {}), totalCount, items: slice }
}

/** Reads an integer query parameter; undefined when absent, 400 PARAMETER_INVALID when malformed or out of range. */
export function intParam(raw: unknown, name: string, min: number, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined
  const text = Array.isArray(raw) ? raw[raw.length - 1] : raw
  if (typeof text !== 'string' || !/^-?\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new BankApiError(400, {
      error: 'PARAMETER_INVALID',
      scope: name,
      parameters: { MIN: String(min), MAX: String(max) },
      message: `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`,
    })
  }
  return Number(text)
}
