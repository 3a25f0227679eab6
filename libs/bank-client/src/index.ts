export { createBankClient, DEFAULT_AUTHORIZATION_LIMITS } from './bank-client.ts'
export type { BankClient, BankClientOptions, BankEndpoint } from './bank-client.ts'
export { OAuthClient, generateState, createPkcePair, AISP_CONSENT_DAYS } from './oauth-client.ts'
export type { AuthorizationUrlRequest } from './oauth-client.ts'
export { AccountsClient } from './accounts-client.ts'
export type { StandingOrderListQuery } from './accounts-client.ts'
export { PaymentsClient, RETURN_URL_HEADER } from './payments-client.ts'
export type { StandingOrderChange } from './payments-client.ts'
export { CardsClient } from './balance-check.ts'
export {
  accessTokenNeedsRefresh,
  consentExpiresWithin,
  consentRemainingMs,
  DEFAULT_REFRESH_MARGIN_MS,
} from './token-lifetimes.ts'
export { createPaymentWithInstantFallback } from './instant-fallback.ts'
export type { InstantFallbackOptions, InstantFallbackResult } from './instant-fallback.ts'
export type { AccessTokenSource, CallOptions } from './bank-transport.ts'
export { buildCobsHeaders, newRequestId } from './cobs-headers.ts'
export type { UserContext } from './cobs-headers.ts'
export { parseCobsErrors, parseOAuthError } from './error-body.ts'
export { HISTORY_WITHOUT_FRESH_TOKEN_DAYS, INSTANT_REFUSAL_CODE, CONSENT_ENDED_REASONS } from './error-mapping.ts'
export { DEFAULT_ACCESS_TOKEN_LIFETIME_MS, readTokenAnswer } from './token-response.ts'
export type { TokenAnswer, ReadTokenOptions } from './token-response.ts'
export { isNoSuchOperation } from './payments-path.ts'
export type { PaymentsPath } from './payments-path.ts'
export { walkPages, walkItems, PagingError } from './paging.ts'
export type { Page, PageSource } from './paging.ts'
export { toMinorUnits, formatMinorUnits, compareAmounts, currencyExponent } from './money.ts'
export type { Amount } from './money.ts'
export { bankToday, BANK_TIME_ZONE } from './dates.ts'

export { classifyPayment, missingSepaFields, INTERNAL_IBAN_PREFIX } from './rules/payment-kind.ts'
export type {
  PaymentKind,
  PaymentKindResult,
  PaymentKindOptions,
  SepaReachable,
} from './rules/payment-kind.ts'
export {
  instantPaymentViolations,
  assertInstantPaymentAllowed,
  isInstant,
  INSTANT_PAYMENT_LIMIT,
} from './rules/instant-payment.ts'
export {
  prepareStandingOrder,
  SUPPORTED_INTERVALS,
  SUPPORTED_MODES,
  SUPPORTED_MODE_DUES,
  UNPROCESSED_STANDING_ORDER_FIELDS,
} from './rules/standing-order.ts'
export type {
  PreparedStandingOrder,
  StandingOrderWarning,
  UnprocessedFieldPolicy,
} from './rules/standing-order.ts'
export { assertPageSize, MIN_PAGE_SIZE, MAX_PAGE_SIZE } from './rules/page-size.ts'
export { CZECH_BANKS, czechBank, isCzechBankCode, OWN_BANK_CODE } from './rules/czech-bank-codes.ts'
export type { CzechBank } from './rules/czech-bank-codes.ts'
export { SEPA_COUNTRIES } from './rules/sepa-countries.ts'
export { isValidIban, normalizeIban, parseCzechAccountNumber } from './rules/iban.ts'

export {
  BankClientError,
  BankInvalidArgumentError,
  BankRuleViolationError,
  InstantPaymentRuleError,
  StandingOrderRuleError,
  PaymentRequestInvalidError,
  BankApiError,
  BankUnauthorizedError,
  BankConsentRevokedError,
  BankAccessTokenExpiredError,
  BankUnexplainedUnauthorizedError,
  BankHistoryRequiresFreshTokenError,
  BankForbiddenError,
  BankNotFoundError,
  BankRequestRejectedError,
  InstantPaymentRefusedError,
  BankThrottledError,
  BankUnavailableError,
  BankOAuthError,
  BankProtocolError,
  BankAuthorizationCallbackError,
} from './errors.ts'
export type { CobsErrorItem, RuleViolation } from './errors.ts'

export type { BankScope, TokenSet } from './model/tokens.ts'
export { BANK_SCOPES } from './model/tokens.ts'
export type {
  Account,
  AccountBalance,
  Balance,
  BalanceCode,
  Transaction,
  TransactionQuery,
} from './model/accounts.ts'
export type {
  AccountReference,
  Party,
  PostalAddress,
  RemittanceInformation,
  PageInfo,
} from './model/common.ts'
export type {
  PaymentRequest,
  Payment,
  PaymentResponse,
  PaymentStatus,
  PaymentStatusCode,
  InstructionPriority,
  SignRedirect,
} from './model/payments.ts'
export { FINAL_PAYMENT_STATUSES } from './model/payments.ts'
export type {
  StandingOrderRequest,
  StandingOrder,
  StandingOrderResponse,
  StandingOrderStatus,
  StandingOrderListItem,
  StandingOrderInterval,
  StandingOrderMode,
} from './model/standing-orders.ts'
export type { BalanceCheckRequest, BalanceCheckAnswer } from './model/balance-check.ts'
