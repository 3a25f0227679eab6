import { BankInvalidArgumentError } from '../errors.ts'

/** The bank's page size bounds for transaction history (the last page may hold fewer). */
export const MIN_PAGE_SIZE = 10
export const MAX_PAGE_SIZE = 100

export function assertPageSize(pageSize: number, field = 'pageSize'): void {
  if (!Number.isInteger(pageSize) || pageSize < MIN_PAGE_SIZE || pageSize > MAX_PAGE_SIZE) {
    throw new BankInvalidArgumentError(
      field,
      `${field} must be an integer from ${MIN_PAGE_SIZE} to ${MAX_PAGE_SIZE} (the bank's limits), got ${String(pageSize)}`,
      { min: MIN_PAGE_SIZE, max: MAX_PAGE_SIZE, value: pageSize },
    )
  }
}

/** Page numbers are 0-based. */
export function assertPageNumber(page: number, field = 'page'): void {
  if (!Number.isInteger(page) || page < 0) {
    throw new BankInvalidArgumentError(
      field,
      `${field} must be an integer >= 0 (pages are 0-based), got ${String(page)}`,
    )
  }
}
