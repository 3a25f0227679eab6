export { EnrichmentClient, createEnrichmentClient } from './enrichment-client.ts'
export type { CallOptions, EnrichmentClientOptions, InvalidationsQuery } from './client-options.ts'
export type { EnrichmentCredentials } from './credentials.ts'
export { CARD_INPUT_FIELDS, MAX_BATCH_SIZE, cardInputToJson, cardInputToQuery } from './card-input.ts'
export type { CardTransactionInput } from './card-input.ts'
export { TRANSFER_INPUT_FIELDS, TRANSFER_SCHEMES } from './transfer-input.ts'
export type {
  CertisTransferInput,
  SepaTransferInput,
  TransferInputByScheme,
  TransferScheme,
  UkTransferInput,
} from './transfer-input.ts'
export type { InputValue, RefreshValue } from './input-encoding.ts'
export { DEFAULT_TOKEN_RENEWAL, TokenCache } from './token-cache.ts'
export type { AccessToken, TokenRenewalPolicy } from './token-cache.ts'
export type {
  BatchEntryResult,
  Category,
  CompleteBatchEntryResult,
  CompleteFindResult,
  FindResult,
  InvalidationBatch,
  InvalidationItemRange,
  InvalidationLevel,
  InvalidationPage,
  InvalidationPaging,
  InvalidEntryResult,
  Merchant,
  Shop,
  Suggestion,
  SuggestionReceipt,
} from './model.ts'
export {
  EnrichmentAbortedError,
  EnrichmentApiError,
  EnrichmentAuthError,
  EnrichmentBadRequestError,
  EnrichmentForbiddenError,
  EnrichmentInputError,
  EnrichmentInvalidResponseError,
  EnrichmentMethodNotAllowedError,
  EnrichmentNetworkError,
  EnrichmentNotFoundError,
  EnrichmentNotImplementedError,
  EnrichmentRequestTooLargeError,
  EnrichmentServerError,
  EnrichmentThrottledError,
  EnrichmentTimeoutError,
  EnrichmentUnauthorizedError,
  EnrichmentUnexpectedStatusError,
  EnrichmentUnsupportedMediaTypeError,
} from './errors.ts'
export type { ApiErrorBody, EnrichmentErrorOptions } from './errors.ts'
export { toEnrichmentError } from './error-mapping.ts'
export { merchantSnapshotData, shopSnapshotData } from './event-snapshots.ts'
export type { MerchantAnswer, MerchantSnapshotData, ShopAnswer, ShopSnapshotData } from './event-snapshots.ts'
