import { BankNotFoundError, BankRequestRejectedError } from './errors.ts'

/**
 * The two spellings of the payment-creation path: the description's endpoint table writes
 * `POST /payments/`, its versioning table `POST /payments`.
 */
export type PaymentsPath = '/payments/' | '/payments'

export function otherPaymentsPath(path: PaymentsPath): PaymentsPath {
  return path === '/payments/' ? '/payments' : '/payments/'
}

/** COBS codes of a 404 about a thing the request names, not about the operation. */
const RESOURCE_MISSING_CODES = new Set(['ID_NOT_FOUND', 'TRANSACTION_MISSING', 'AC01', 'AC02', 'RC01'])

/**
 * True for a refusal that says the path itself is not served, so nothing was created: a 404
 * (or 405) without a COBS error item that names a request field (`scope`) or a missing
 * resource. A gateway's HTML or empty 404, or `{errors:[{error:"NOT_FOUND"}]}`, qualify; a 404
 * about the debtor account does not, and is never answered by sending the payment again.
 */
export function isNoSuchOperation(err: unknown): boolean {
  const status =
    err instanceof BankNotFoundError || err instanceof BankRequestRejectedError ? err.status : undefined
  if (status !== 404 && status !== 405) return false
  const items = (err as BankNotFoundError).errors
  return items.every((e) => e.scope === undefined && !RESOURCE_MISSING_CODES.has(e.error))
}
