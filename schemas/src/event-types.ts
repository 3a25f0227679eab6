/**
 * TypeScript shapes of the Avro events in `schemas/avro/`, written by hand to
 * read well. `event-types.test.ts` checks sample values of each against the
 * schemas with avsc, so a field added to one side only fails the unit tests.
 *
 * Conventions of the mapping (avsc defaults): `["null", T]` is `T | null`,
 * `long` with logicalType timestamp-millis is a `number` of epoch milliseconds
 * UTC, `bytes` would be a `Buffer`, enums are string unions. Optional input strings
 * follow the absent-versus-empty rule: `null` = the source does not have the
 * field, `''` = it has it and it is empty.
 */

/** Epoch milliseconds UTC (Avro long, logicalType timestamp-millis). */
export type EpochMillis = number

export type CreditDebit = 'DEBIT' | 'CREDIT'

/** ISO 8583 card-acceptor fields as received; see CardTransaction in RawTransaction.avsc. */
export interface CardTransaction {
  merchantId: string | null
  terminalId: string | null
  description: string | null
  street: string | null
  city: string | null
  postalCode: string | null
  country: string | null
  mcc: string | null
  acquirerId: string | null
  transactionAmount: string | null
  transactionCurrency: string | null
  localDateTime: string | null
  processingCode: string | null
  posEntryMode: string | null
  /** First 6 digits of the card number only. */
  cardBin: string | null
}

export interface BankTransfer {
  scheme: string
  counterpartyName: string | null
  counterpartyAccountPrefix: string | null
  counterpartyAccountNumber: string | null
  counterpartyBankCode: string | null
  counterpartySortCode: string | null
  counterpartyIban: string | null
  counterpartyBic: string | null
  counterpartyCity: string | null
  counterpartyPostalCode: string | null
  counterpartyCountry: string | null
  variableSymbol: string | null
  constantSymbol: string | null
  specificSymbol: string | null
  message: string | null
  endToEndId: string | null
  paymentType: string | null
}

/** Value of `transactions.raw.v1`. Exactly one of `card` / `transfer` is non-null. */
export interface RawTransaction {
  transactionId: string
  source: string
  sourceReference: string | null
  customerId: string | null
  accountId: string | null
  occurredAt: EpochMillis
  receivedAt: EpochMillis
  /** Plain decimal string, e.g. "1234.50"; never a float. */
  amount: string
  currency: string
  creditDebit: CreditDebit
  refresh: boolean
  card: CardTransaction | null
  transfer: BankTransfer | null
}

export interface ShopCategory {
  name: string | null
  logo: string | null
}

export interface ShopAddress {
  street: string | null
  city: string | null
  zip: string | null
  country: string | null
  areas: Record<string, string> | null
}

export interface ShopCoordinates {
  type: string | null
  lat: number | null
  long: number | null
}

export interface ShopLocation {
  address: ShopAddress | null
  coordinates: ShopCoordinates | null
}

/** Value of `merchant.shops.v1` (null value = tombstone). */
export interface Shop {
  uid: string
  type: string | null
  tags: string[] | null
  merchantUid: string | null
  category: ShopCategory | null
  location: ShopLocation | null
  url: string | null
  googlePlaceId: string | null
  fetchedAt: EpochMillis
  invalidationItemId: number | null
}

/** Value of `merchant.merchants.v1` (null value = tombstone). */
export interface Merchant {
  uid: string
  name: string | null
  logo: string | null
  url: string | null
  categoryName: string | null
  fetchedAt: EpochMillis
  invalidationItemId: number | null
}

export type EnrichmentStatus = 'MATCHED' | 'NOT_FOUND' | 'REJECTED'

export interface RejectReason {
  code: string
  message: string
  httpStatus: number | null
}

export interface LookupInfo {
  operation: string
  attempts: number
  shopSource: string | null
  merchantSource: string | null
}

/** Value of `transactions.enriched.v1`. */
export interface EnrichedTransaction {
  transactionId: string
  raw: RawTransaction
  status: EnrichmentStatus
  rejectReason: RejectReason | null
  handle: string | null
  shopUid: string | null
  merchantUid: string | null
  shop: Shop | null
  merchant: Merchant | null
  enrichedAt: EpochMillis
  lookup: LookupInfo | null
  /**
   * Set by a backfill, null (or left out: the Avro default applies) for live
   * traffic. Optional so that producers written before v2 stay valid.
   */
  backfill?: BackfillMarker | null
}

/** Where a backfilled result came from (EnrichedTransaction v2). */
export interface BackfillMarker {
  backfillId: string
  source: string
  row: string
}

/** Value of `merchant.invalidations.v1`. */
export interface Invalidation {
  itemId: number
  level: string
  type: string | null
  entityKey: string
  seenAt: EpochMillis
  feedCurrentTime: string | null
}

/** Value of `merchant.invalidations.cursor.v1`. */
export interface InvalidationCursor {
  feed: string
  lastItemId: number
  feedCurrentTime: string | null
  updatedAt: EpochMillis
}

export type MerchantEntityType = 'SHOP' | 'MERCHANT'

/** Value of `merchant.fetched.v1`: what ingest fetched on a cache miss, for the refresher. */
export interface MerchantDataFetched {
  entityType: MerchantEntityType
  uid: string
  shop: Shop | null
  merchant: Merchant | null
  notFound: boolean
  fetchedBy: string | null
}

export type ConsentStatus = 'PENDING' | 'ACTIVE' | 'EXPIRING' | 'REVOKED' | 'EXPIRED' | 'ENDED'

export interface AccountSyncState {
  accountId: string
  currency: string | null
  /** ISO date YYYY-MM-DD. */
  lastBookingDate: string | null
  overlapDays: number
  lastSyncedAt: EpochMillis | null
  pendingEntryReferences: string[]
  seenEntries: SeenEntry[]
}

/** An entry bank-sync already published (de-duplication within the overlap window). */
export interface SeenEntry {
  entryReference: string
  /** YYYY-MM-DD. */
  date: string
}

/** Value of `bank.consents.v1`. */
export interface Consent {
  consentId: string
  customerId: string
  bank: string | null
  status: ConsentStatus
  statusReason: string | null
  scopes: string[]
  /** @tep/token-cipher envelope, never a clear token. */
  accessToken: string | null
  /** @tep/token-cipher envelope, never a clear token. */
  refreshToken: string | null
  accessTokenExpiresAt: EpochMillis | null
  refreshTokenExpiresAt: EpochMillis | null
  tokenIssuedAt: EpochMillis | null
  grantedAt: EpochMillis | null
  expiresAt: EpochMillis | null
  expiryNotifiedAt: EpochMillis | null
  authorizationStateHash: string | null
  accounts: AccountSyncState[]
  version: number
  updatedAt: EpochMillis
}

export type BankTransactionChangeType = 'ADDED' | 'MODIFIED'
export type BankTransactionStatus = 'BOOKED' | 'PENDING'

/** Value of `bank.transactions.v1`. */
export interface BankTransaction {
  consentId: string
  accountId: string
  entryReference: string
  entryReferenceFromBank: boolean
  changeType: BankTransactionChangeType
  status: BankTransactionStatus
  amount: string
  currency: string
  creditDebit: CreditDebit
  reversal: boolean | null
  bookingDate: string | null
  valueDate: string | null
  bankTransactionCode: string | null
  counterpartyName: string | null
  counterpartyIban: string | null
  counterpartyAccountPrefix: string | null
  counterpartyAccountNumber: string | null
  counterpartyBankCode: string | null
  counterpartyBic: string | null
  variableSymbol: string | null
  constantSymbol: string | null
  specificSymbol: string | null
  endToEndId: string | null
  remittanceInformation: string | null
  additionalInformation: string | null
  isCardPayment: boolean
  cardScheme: string | null
  rawJson: string
  transactionId: string
  fetchedAt: EpochMillis
}

/** Schema name to event type, for generic helpers (`Serde<EventTypes['Shop']>`). */
export interface EventTypes {
  RawTransaction: RawTransaction
  EnrichedTransaction: EnrichedTransaction
  Shop: Shop
  Merchant: Merchant
  Invalidation: Invalidation
  InvalidationCursor: InvalidationCursor
  MerchantDataFetched: MerchantDataFetched
  Consent: Consent
  BankTransaction: BankTransaction
}
