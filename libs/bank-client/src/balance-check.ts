import { expectShape, isObject, type BankTransport, type CallOptions } from './bank-transport.ts'
import { BankInvalidArgumentError, BankProtocolError } from './errors.ts'
import type { BalanceCheckAnswer, BalanceCheckRequest, BalanceCheckResponse } from './model/balance-check.ts'
import { toMinorUnits, toWireNumber } from './money.ts'
import { isValidIban } from './rules/iban.ts'

/** A run of 13 to 19 digits (spaces or dashes allowed) looks like a full card number. */
const FULL_PAN = /(?:\d[ -]?){13,19}/

/** Checks a balance-check request and converts the amount to its wire form. */
export function balanceCheckBody(req: BalanceCheckRequest): Record<string, unknown> {
  const id = String(req.exchangeIdentification ?? '')
  if (id === '' || id.length > 18) {
    throw new BankInvalidArgumentError(
      'exchangeIdentification',
      `exchangeIdentification must be 1 to 18 characters, got ${id.length}`,
    )
  }
  const iban = req.debtorAccount?.identification?.iban
  if (!iban || !isValidIban(iban)) {
    throw new BankInvalidArgumentError(
      'debtorAccount.identification.iban',
      'debtorAccount.identification.iban must be a valid IBAN',
    )
  }
  const maskedPan = req.card?.maskedPan
  if (maskedPan !== undefined && FULL_PAN.test(maskedPan)) {
    // Never send (or log in an error) a full card number: PCI scope ends at the masked form.
    throw new BankInvalidArgumentError(
      'card.maskedPan',
      'card.maskedPan looks like a full card number; send it masked (e.g. 4111xxxxxxxx1111)',
    )
  }
  const amount = { value: req.transactionDetails.totalAmount, currency: req.transactionDetails.currency }
  if (toMinorUnits(amount, 'transactionDetails') <= 0n) {
    throw new BankInvalidArgumentError(
      'transactionDetails.totalAmount',
      'transactionDetails.totalAmount must be positive',
    )
  }
  return {
    ...req,
    transactionDetails: {
      currency: amount.currency,
      totalAmount: toWireNumber(amount, 'transactionDetails'),
    },
  }
}

export async function balanceCheck(
  transport: BankTransport,
  operation: string,
  path: string,
  req: BalanceCheckRequest,
  options: CallOptions,
): Promise<BalanceCheckAnswer> {
  const json = balanceCheckBody(req)
  // A balance check changes nothing at the bank, so it is safe to retry like a read.
  const res = await transport.call<BalanceCheckResponse>(
    { operation, method: 'POST', path, json, idempotent: true },
    options,
  )
  const body = expectShape<BalanceCheckResponse>(
    res,
    operation,
    'a response field',
    (b) => isObject(b) && typeof b.response === 'string',
  )
  const answer = body.response
  if (answer !== 'APPR' && answer !== 'DECL') {
    throw new BankProtocolError(
      `${operation}: the bank answered response ${JSON.stringify(body.response)}, expected APPR or DECL (X-Request-ID ${res.requestId})`,
      {
        operation,
        requestId: res.requestId,
        status: res.status,
      },
    )
  }
  return answer as BalanceCheckAnswer
}

/** The cards interface (scope CISP). */
export class CardsClient {
  readonly #t: BankTransport

  constructor(transport: BankTransport) {
    this.#t = transport
  }

  /** Does the account's available balance cover the amount? `APPR` yes, `DECL` no. */
  cardBalanceCheck(req: BalanceCheckRequest, options: CallOptions = {}): Promise<BalanceCheckAnswer> {
    return balanceCheck(this.#t, 'bank.cards.balanceCheck', '/accounts/balanceCheck', req, options)
  }
}
