import { expectShape, isObject, type BankTransport, type CallOptions } from './bank-transport.ts'
import { assertCurrency } from './money.ts'
import { assertIsoDate } from './dates.ts'
import { encodePathSegment } from '@tep/http'
import type {
  Account,
  AccountBalance,
  AccountsPage,
  Transaction,
  TransactionPage,
  TransactionQuery,
} from './model/accounts.ts'
import type {
  StandingOrderListItem,
  StandingOrdersPage,
  StandingOrderResponse,
} from './model/standing-orders.ts'
import { pagedBody } from './paged-body.ts'
import { walkItems, walkPages, type Page } from './paging.ts'
import { MAX_PAGE_SIZE, assertPageNumber, assertPageSize } from './rules/page-size.ts'
import { BankInvalidArgumentError } from './errors.ts'

export interface StandingOrderListQuery {
  /** Currency of the source account; the bank's default bucket (CZK) when absent. */
  currency?: string
  /** 0-based. */
  page?: number
  /** Records per page, 1 to 100; absent = the whole list in one page. */
  size?: number
}

/** The accounts interface (scope AISP): accounts, balances, transaction history, standing orders. */
export class AccountsClient {
  readonly #t: BankTransport

  constructor(transport: BankTransport) {
    this.#t = transport
  }

  /** Every consented current and credit-card account (all pages). */
  async listAccounts(options: CallOptions = {}): Promise<Account[]> {
    const accounts: Account[] = []
    for await (const a of walkItems((page) => this.getAccountsPage({ page, size: MAX_PAGE_SIZE }, options)))
      accounts.push(a)
    return accounts
  }

  /** One page of accounts (`page` 0-based, `size` 1..100). */
  async getAccountsPage(
    query: { page?: number; size?: number } = {},
    options: CallOptions = {},
  ): Promise<Page<Account>> {
    const operation = 'bank.accounts.listAccounts'
    if (query.page !== undefined) assertPageNumber(query.page)
    if (query.size !== undefined) assertListSize(query.size)
    const res = await this.#t.call<AccountsPage>(
      { operation, method: 'GET', path: '/accounts', query: { page: query.page, size: query.size } },
      options,
    )
    const body = pagedBody<AccountsPage>(this.#t, res, operation, 'accounts', 'an accounts page')
    return { ...body, items: body.accounts }
  }

  /** Account detail and balances. `currency` selects the bucket of a multi-currency account. */
  async getBalance(
    accountId: string,
    query: { currency?: string } = {},
    options: CallOptions = {},
  ): Promise<AccountBalance> {
    const operation = 'bank.accounts.getBalance'
    assertId('accountId', accountId)
    if (query.currency !== undefined) assertCurrency(query.currency)
    const res = await this.#t.call<AccountBalance>(
      {
        operation,
        method: 'GET',
        path: `/accounts/${encodePathSegment(accountId)}/balance`,
        query: { currency: query.currency },
      },
      options,
    )
    return expectShape<AccountBalance>(
      res,
      operation,
      'balances',
      (b) => isObject(b) && Array.isArray(b.balances),
    )
  }

  /**
   * One page of the history, newest first. `pageSize` is checked (10 to 100) before sending.
   * A `dateFrom` more than 90 days back without a fresh token throws
   * BankHistoryRequiresFreshTokenError (not BankConsentRevokedError).
   */
  async getTransactionsPage(
    accountId: string,
    query: TransactionQuery = {},
    options: CallOptions = {},
  ): Promise<Page<Transaction>> {
    const operation = 'bank.accounts.getTransactions'
    assertId('accountId', accountId)
    if (query.pageSize !== undefined) assertPageSize(query.pageSize)
    if (query.page !== undefined) assertPageNumber(query.page)
    if (query.dateFrom !== undefined) assertIsoDate(query.dateFrom, 'dateFrom')
    const res = await this.#t.call<TransactionPage>(
      {
        operation,
        method: 'GET',
        path: `/accounts/${encodePathSegment(accountId)}/transactions`,
        query: { pageSize: query.pageSize, dateFrom: query.dateFrom, page: query.page },
      },
      options,
      { dateFrom: query.dateFrom },
    )
    const body = pagedBody<TransactionPage>(this.#t, res, operation, 'transactions', 'a transactions page')
    return { ...body, items: body.transactions }
  }

  /** Every page of the history from `dateFrom`, in the bank's order (newest first). */
  transactionPages(
    accountId: string,
    query: Omit<TransactionQuery, 'page'> & { startPage?: number } = {},
    options: CallOptions = {},
  ): AsyncGenerator<Page<Transaction>> {
    if (query.pageSize !== undefined) assertPageSize(query.pageSize)
    const { startPage, ...rest } = query
    return walkPages((page) => this.getTransactionsPage(accountId, { ...rest, page }, options), startPage)
  }

  /** Every transaction from `dateFrom`, page by page, to the end. */
  transactions(
    accountId: string,
    query: Omit<TransactionQuery, 'page'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<Transaction> {
    if (query.pageSize !== undefined) assertPageSize(query.pageSize)
    return walkItems((page) => this.getTransactionsPage(accountId, { ...query, page }, options))
  }

  /** One page of active standing orders on the consented accounts. */
  async listStandingOrders(
    query: StandingOrderListQuery = {},
    options: CallOptions = {},
  ): Promise<Page<StandingOrderListItem>> {
    const operation = 'bank.accounts.listStandingOrders'
    if (query.currency !== undefined) assertCurrency(query.currency)
    if (query.page !== undefined) assertPageNumber(query.page)
    if (query.size !== undefined) assertListSize(query.size)
    const res = await this.#t.call<StandingOrdersPage>(
      {
        operation,
        method: 'GET',
        path: '/standingorders',
        query: { currency: query.currency, page: query.page, size: query.size },
      },
      options,
    )
    const body = pagedBody<StandingOrdersPage>(this.#t, res, operation, 'standingOrders', 'a standing orders page')
    return { ...body, items: body.standingOrders }
  }

  /** Every active standing order in `currency`, all pages. */
  standingOrders(
    query: Omit<StandingOrderListQuery, 'page'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<StandingOrderListItem> {
    if (query.size !== undefined) assertListSize(query.size)
    return walkItems((page) => this.listStandingOrders({ ...query, page }, options))
  }

  /** Detail of one standing order (`standingOrderIdentification.transactionIdentification`). */
  async getStandingOrder(standingOrderId: string, options: CallOptions = {}): Promise<StandingOrderResponse> {
    const operation = 'bank.accounts.getStandingOrder'
    assertId('standingOrderId', standingOrderId)
    const res = await this.#t.call<StandingOrderResponse>(
      { operation, method: 'GET', path: `/standingorders/${encodePathSegment(standingOrderId)}` },
      options,
    )
    return expectShape<StandingOrderResponse>(res, operation, 'a standing order', isObject)
  }
}

export function assertId(field: string, value: string): void {
  if (typeof value !== 'string' || value.trim() === '')
    throw new BankInvalidArgumentError(field, `${field} must be a non-empty string`)
}

function assertListSize(size: number): void {
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw new BankInvalidArgumentError(
      'size',
      `size must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${String(size)}`,
    )
  }
}
