import { encodePathSegment } from '@tep/http'
import { assertId } from './accounts-client.ts'
import { balanceCheck } from './balance-check.ts'
import {
  expectShape,
  isObject,
  type BankResult,
  type BankTransport,
  type CallOptions,
} from './bank-transport.ts'
import type { ContractDriftListener } from '@tep/observability'
import { BankInvalidArgumentError, BankProtocolError } from './errors.ts'
import { isNoSuchOperation, otherPaymentsPath, type PaymentsPath } from './payments-path.ts'
import type { BalanceCheckAnswer, BalanceCheckRequest } from './model/balance-check.ts'
import type {
  Payment,
  PaymentRequest,
  PaymentResponse,
  PaymentStatus,
  SignRedirect,
} from './model/payments.ts'
import type {
  StandingOrder,
  StandingOrderRequest,
  StandingOrderResponse,
  StandingOrderStatus,
} from './model/standing-orders.ts'
import { toWireNumber } from './money.ts'
import { assertInstantPaymentAllowed, isInstant } from './rules/instant-payment.ts'
import type { PaymentKindOptions } from './rules/payment-kind.ts'
import { assertNoViolations, commonPaymentViolations } from './rules/payment-request.ts'
import {
  prepareStandingOrder,
  type StandingOrderWarning,
  type UnprocessedFieldPolicy,
} from './rules/standing-order.ts'

/** The header that carries the URL the user returns to after signing (bank-sim OpenAPI). */
export const RETURN_URL_HEADER = 'TPP-Redirect-URI'

export interface PaymentsClientOptions {
  now: () => Date
  /** What to do with standing-order fields the bank does not process. Default `drop` (with a warning). */
  unprocessedStandingOrderFields: UnprocessedFieldPolicy
  kindOptions: PaymentKindOptions
  logger: { warn(obj: object, msg?: string): void } | undefined
  onContractDrift: ContractDriftListener
}

export interface StandingOrderChange {
  standingOrder: StandingOrder
  /** Fields removed before sending because the bank does not process them. */
  warnings: StandingOrderWarning[]
}

function withWireAmount<
  T extends { amount: { instructedAmount: { value: string | number; currency: string } } },
>(req: T): T {
  return {
    ...req,
    amount: {
      ...req.amount,
      instructedAmount: {
        currency: req.amount.instructedAmount.currency,
        value: toWireNumber(req.amount.instructedAmount, 'amount.instructedAmount'),
      },
    },
  }
}

function assertReturnUrl(returnUrl: string): void {
  let url: URL | undefined
  try {
    url = new URL(returnUrl)
  } catch {
    url = undefined
  }
  // It travels in a header as given: the URL parser would drop line breaks, the header must not carry them.
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !/^[\x21-\x7e]+$/.test(returnUrl)) {
    throw new BankInvalidArgumentError(
      'returnUrl',
      `returnUrl must be an absolute http(s) URL of printable ASCII without spaces, got ${JSON.stringify(returnUrl)}`,
    )
  }
}

function signRedirect(res: BankResult<unknown>, operation: string): SignRedirect {
  const body = expectShape<Record<string, unknown>>(
    res,
    operation,
    'href.url',
    (b) => isObject(b) && isObject(b.href) && typeof b.href.url === 'string',
  )
  const href = body.href as { url: string }
  const formData = isObject(body.formData) ? (body.formData as Record<string, string>) : undefined
  return { url: href.url, method: typeof body.method === 'string' ? body.method : 'GET', formData, raw: body }
}

function protocolError(operation: string, res: BankResult<unknown>, what: string): BankProtocolError {
  return new BankProtocolError(
    `${operation}: the bank's answer lacks ${what} (X-Request-ID ${res.requestId})`,
    { operation, requestId: res.requestId, status: res.status },
  )
}

/** Resolves the payment id and sign id from either spelling (RB `transaction.identification`/`signID`, COBS `transactionIdentification`/`signId`). */
export function toPayment(raw: PaymentResponse, operation: string, res: BankResult<unknown>): Payment {
  const paymentId = raw.transaction?.identification ?? raw.paymentIdentification?.transactionIdentification
  if (typeof paymentId !== 'string' || paymentId === '')
    throw protocolError(operation, res, 'a payment id (transaction.identification)')
  const signId = raw.signInfo?.signID ?? raw.signInfo?.signId
  return {
    paymentId,
    signId: typeof signId === 'string' ? signId : undefined,
    status: raw.instructionStatus,
    raw,
  }
}

export function toStandingOrder(
  raw: StandingOrderResponse,
  operation: string,
  res: BankResult<unknown>,
): StandingOrder {
  const id = raw.standingOrderIdentification?.transactionIdentification ?? raw.transaction?.identification
  if (typeof id !== 'string' || id === '')
    throw protocolError(operation, res, 'standingOrderIdentification.transactionIdentification')
  const signId = raw.signInfo?.signID ?? raw.signInfo?.signId
  return {
    standingOrderId: id,
    signId: typeof signId === 'string' ? signId : undefined,
    status: raw.instructionStatus,
    raw,
  }
}

/** The standing order a create, read, change or delete answered with. */
function standingOrderOf(res: BankResult<StandingOrderResponse>, operation: string): StandingOrder {
  return toStandingOrder(
    expectShape<StandingOrderResponse>(res, operation, 'a standing order', isObject),
    operation,
    res,
  )
}

/** The payments interface (scope PISP): single payments and standing orders. */
export class PaymentsClient {
  readonly #t: BankTransport
  readonly #o: PaymentsClientOptions
  /** Where this bank takes new payments: the description's `/payments/` until a 404 says otherwise. */
  #paymentsPath: PaymentsPath = '/payments/'

  constructor(transport: BankTransport, options: PaymentsClientOptions) {
    this.#t = transport
    this.#o = options
  }

  /** Optional sufficiency check before initiation. `APPR` does not reserve the funds. */
  paymentBalanceCheck(req: BalanceCheckRequest, options: CallOptions = {}): Promise<BalanceCheckAnswer> {
    return balanceCheck(this.#t, 'bank.payments.balanceCheck', '/payments/balanceCheck', req, options)
  }

  /**
   * Creates a payment that then waits for the user's signature. Checked before sending: ids,
   * amount (positive, currency decimals), dates, IBAN check digits, and for INST the instant
   * rules (InstantPaymentRuleError). A 400 `NO_PART` on an INST payment throws
   * InstantPaymentRefusedError; see `createPaymentWithInstantFallback`.
   */
  async createPayment(req: PaymentRequest, options: CallOptions = {}): Promise<Payment> {
    const operation = 'bank.payments.createPayment'
    assertNoViolations(
      commonPaymentViolations({
        instructionIdentification: req.paymentIdentification?.instructionIdentification,
        instructionIdField: 'paymentIdentification.instructionIdentification',
        amount: req.amount?.instructedAmount,
        requestedExecutionDate: req.requestedExecutionDate,
        debtorAccount: req.debtorAccount,
        creditorAccount: req.creditorAccount,
        unstructured: req.remittanceInformation?.unstructured,
      }),
    )
    assertInstantPaymentAllowed(req, this.#o.now(), this.#o.kindOptions)
    const json = withWireAmount(req)
    const send = (path: PaymentsPath) =>
      this.#t.call<PaymentResponse>({ operation, method: 'POST', path, json, idempotent: false }, options, {
        instant: isInstant(req),
      })
    const tried = this.#paymentsPath
    let res: BankResult<PaymentResponse>
    try {
      res = await send(tried)
    } catch (err) {
      // A gateway that does not know the path created nothing, so sending to the other
      // spelling cannot duplicate the payment (payments-path.ts says which 404s those are).
      if (!isNoSuchOperation(err)) throw err
      const other = otherPaymentsPath(tried)
      res = await send(other)
      this.#paymentsPath = other
      this.#o.onContractDrift({
        api: 'bank',
        operation,
        field: tried,
        kind: 'operation-missing',
        detail: `served at ${other}`,
      })
      this.#o.logger?.warn(
        { operation, tried, servedAt: other },
        `the bank has no POST ${tried}; payments are created with POST ${other} from now on`,
      )
    }
    return toPayment(expectShape<PaymentResponse>(res, operation, 'a payment', isObject), operation, res)
  }

  /** Payment detail; the bank answers it only until the user finished the authorization (then 404). */
  async getPayment(paymentId: string, options: CallOptions = {}): Promise<Payment> {
    const operation = 'bank.payments.getPayment'
    assertId('paymentId', paymentId)
    const res = await this.#t.call<PaymentResponse>(
      { operation, method: 'GET', path: `/payments/${encodePathSegment(paymentId)}` },
      options,
    )
    return toPayment(expectShape<PaymentResponse>(res, operation, 'a payment', isObject), operation, res)
  }

  /**
   * Starts the user's authorization: returns the bank page to send the browser to. After
   * the user finishes or abandons it, the bank sends the browser to `returnUrl` with
   * `paymentId` appended. Always read the status afterwards; never trust the return alone.
   */
  async signPayment(
    paymentId: string,
    signId: string,
    returnUrl: string,
    options: CallOptions = {},
  ): Promise<SignRedirect> {
    const operation = 'bank.payments.signPayment'
    assertId('paymentId', paymentId)
    assertId('signId', signId)
    assertReturnUrl(returnUrl)
    const res = await this.#t.call<unknown>(
      {
        operation,
        method: 'POST',
        path: `/payments/${encodePathSegment(paymentId)}/sign/${encodePathSegment(signId)}`,
        headers: { [RETURN_URL_HEADER]: returnUrl },
        json: { authorizationType: 'USERAGENT_REDIRECT' },
        // Asking again only replaces the authorization page URL, so a retry is harmless.
        idempotent: true,
      },
      options,
    )
    return signRedirect(res, operation)
  }

  async getPaymentStatus(paymentId: string, options: CallOptions = {}): Promise<PaymentStatus> {
    const operation = 'bank.payments.getPaymentStatus'
    assertId('paymentId', paymentId)
    const res = await this.#t.call<PaymentStatus>(
      { operation, method: 'GET', path: `/payments/${encodePathSegment(paymentId)}/status` },
      options,
    )
    return expectShape<PaymentStatus>(
      res,
      operation,
      'instructionStatus',
      (b) => isObject(b) && typeof b.instructionStatus === 'string',
    )
  }

  /** Creates a standing order (waits for the user's signature). See `prepareStandingOrder` for the checks. */
  async createStandingOrder(
    req: StandingOrderRequest,
    options: CallOptions & { unprocessedFields?: UnprocessedFieldPolicy } = {},
  ): Promise<StandingOrderChange> {
    const operation = 'bank.standingOrders.create'
    const { body, warnings } = this.#prepare(req, operation, options.unprocessedFields)
    const res = await this.#t.call<StandingOrderResponse>(
      { operation, method: 'POST', path: '/standingorders', json: withWireAmount(body), idempotent: false },
      options,
    )
    return {
      standingOrder: standingOrderOf(res, operation),
      warnings,
    }
  }

  /** Detail of a standing order created through this application. */
  async getStandingOrder(standingOrderId: string, options: CallOptions = {}): Promise<StandingOrder> {
    const operation = 'bank.standingOrders.get'
    assertId('standingOrderId', standingOrderId)
    const res = await this.#t.call<StandingOrderResponse>(
      { operation, method: 'GET', path: `/standingorders/${encodePathSegment(standingOrderId)}` },
      options,
    )
    return standingOrderOf(res, operation)
  }

  /** Changes a standing order; the change takes effect after the user signs the NEW signId. */
  async updateStandingOrder(
    standingOrderId: string,
    req: StandingOrderRequest,
    options: CallOptions & { unprocessedFields?: UnprocessedFieldPolicy } = {},
  ): Promise<StandingOrderChange> {
    const operation = 'bank.standingOrders.update'
    assertId('standingOrderId', standingOrderId)
    const { body, warnings } = this.#prepare(req, operation, options.unprocessedFields)
    const res = await this.#t.call<StandingOrderResponse>(
      {
        operation,
        method: 'PUT',
        path: `/standingorders/${encodePathSegment(standingOrderId)}`,
        json: withWireAmount(body),
      },
      options,
    )
    return {
      standingOrder: standingOrderOf(res, operation),
      warnings,
    }
  }

  /** Asks to delete a standing order; it ends after the user signs the NEW signId (at once if it was never signed). */
  async deleteStandingOrder(standingOrderId: string, options: CallOptions = {}): Promise<StandingOrder> {
    const operation = 'bank.standingOrders.delete'
    assertId('standingOrderId', standingOrderId)
    const res = await this.#t.call<StandingOrderResponse>(
      { operation, method: 'DELETE', path: `/standingorders/${encodePathSegment(standingOrderId)}` },
      options,
    )
    return standingOrderOf(res, operation)
  }

  /** Starts the user's authorization of a standing order, a change or a deletion. */
  async signStandingOrder(
    standingOrderId: string,
    signId: string,
    returnUrl: string,
    options: CallOptions = {},
  ): Promise<SignRedirect> {
    const operation = 'bank.standingOrders.sign'
    assertId('standingOrderId', standingOrderId)
    assertId('signId', signId)
    assertReturnUrl(returnUrl)
    const res = await this.#t.call<unknown>(
      {
        operation,
        method: 'POST',
        path: `/standingorders/${encodePathSegment(standingOrderId)}/sign/${encodePathSegment(signId)}`,
        headers: { [RETURN_URL_HEADER]: returnUrl },
        json: { authorizationType: 'USERAGENT_REDIRECT' },
        idempotent: true,
      },
      options,
    )
    return signRedirect(res, operation)
  }

  /** Status of a standing order and the payments it has made. */
  async getStandingOrderStatus(
    standingOrderId: string,
    options: CallOptions = {},
  ): Promise<StandingOrderStatus> {
    const operation = 'bank.standingOrders.status'
    assertId('standingOrderId', standingOrderId)
    const res = await this.#t.call<StandingOrderStatus>(
      { operation, method: 'GET', path: `/standingorders/${encodePathSegment(standingOrderId)}/status` },
      options,
    )
    return expectShape<StandingOrderStatus>(
      res,
      operation,
      'instructionStatus and realizedPayments',
      (b) => isObject(b) && typeof b.instructionStatus === 'string' && Array.isArray(b.realizedPayments),
    )
  }

  #prepare(
    req: StandingOrderRequest,
    operation: string,
    policy: UnprocessedFieldPolicy | undefined,
  ): { body: StandingOrderRequest; warnings: StandingOrderWarning[] } {
    assertNoViolations(
      commonPaymentViolations({
        instructionIdentification: req.standingOrderIdentification?.instructionIdentification,
        instructionIdField: 'standingOrderIdentification.instructionIdentification',
        amount: req.amount?.instructedAmount,
        requestedExecutionDate: req.requestedExecutionDate,
        debtorAccount: req.debtorAccount,
        creditorAccount: req.creditorAccount,
        unstructured: req.remittanceInformation?.unstructured,
      }),
    )
    const prepared = prepareStandingOrder(req, policy ?? this.#o.unprocessedStandingOrderFields)
    for (const w of prepared.warnings) this.#o.logger?.warn({ operation, field: w.field }, w.message)
    return prepared
  }
}
