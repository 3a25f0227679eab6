import type {
  BankTransaction,
  CardTransaction,
  Consent,
  EnrichedTransaction,
  Invalidation,
  InvalidationCursor,
  Merchant,
  MerchantDataFetched,
  RawTransaction,
  Shop,
  BankTransfer,
} from './event-types.ts'

/**
 * Complete, valid example events (every field present) for tests and docs.
 * Each call returns fresh objects, so callers may mutate them freely.
 */

const T0 = Date.UTC(2026, 0, 31, 14, 30, 0)

export function exampleCardTransaction(): CardTransaction {
  return {
    merchantId: '000000123456789',
    terminalId: 'T0012345',
    description: 'ALBERT HM 1234',
    street: null,
    city: 'PRAHA',
    postalCode: '',
    country: 'CZ',
    mcc: '5411',
    acquirerId: '400001',
    transactionAmount: '000000012350',
    transactionCurrency: '203',
    localDateTime: '20260131153000',
    processingCode: '000000',
    posEntryMode: '071',
    cardBin: '476173',
  }
}

export function exampleBankTransfer(): BankTransfer {
  return {
    scheme: 'CERTIS',
    counterpartyName: 'PRAZSKA ENERGETIKA',
    counterpartyAccountPrefix: '',
    counterpartyAccountNumber: '2000145399',
    counterpartyBankCode: '0800',
    counterpartySortCode: null,
    counterpartyIban: 'CZ6508000000192000145399',
    counterpartyBic: 'GIBACZPX',
    counterpartyCity: null,
    counterpartyPostalCode: null,
    counterpartyCountry: 'CZ',
    variableSymbol: '1234567890',
    constantSymbol: '0308',
    specificSymbol: '',
    message: 'Zaloha elektrina 01/2026',
    endToEndId: null,
    paymentType: null,
  }
}

export function exampleRawCardTransaction(transactionId = 'tx-card-0001'): RawTransaction {
  return {
    transactionId,
    source: 'CARD_PROCESSOR',
    sourceReference: 'msg-77001',
    customerId: 'cust-1',
    accountId: null,
    occurredAt: T0,
    receivedAt: T0 + 250,
    amount: '123.50',
    currency: 'CZK',
    creditDebit: 'DEBIT',
    refresh: false,
    card: exampleCardTransaction(),
    transfer: null,
  }
}

export function exampleRawBankTransfer(transactionId = 'tx-transfer-0001'): RawTransaction {
  return {
    transactionId,
    source: 'BANK_SYNC',
    sourceReference: 'consent-1/acc-1/entry-9',
    customerId: 'cust-1',
    accountId: 'acc-1',
    occurredAt: T0,
    receivedAt: T0 + 60_000,
    amount: '1500.00',
    currency: 'CZK',
    creditDebit: 'DEBIT',
    refresh: false,
    card: null,
    transfer: exampleBankTransfer(),
  }
}

export function exampleShop(uid = 'A987AKnMPJ0CR9PZo1Jy5A'): Shop {
  return {
    uid,
    type: 'bricks',
    tags: ['Hyper-Supermarket'],
    merchantUid: '538VqZ4gn33tVJJWEYa8d3@cz',
    category: { name: 'Groceries', logo: 'https://cdn.example.test/categories/groceries.png' },
    location: {
      address: {
        street: 'Vodickova 1',
        city: 'Praha',
        zip: '11000',
        country: 'CZ',
        areas: { '10': 'Praha' },
      },
      coordinates: { type: 'rooftop', lat: 50.0812, long: 14.4253 },
    },
    url: 'https://albert.example.test',
    googlePlaceId: 'ChIJexample',
    fetchedAt: T0,
    invalidationItemId: null,
  }
}

export function exampleMerchant(uid = '538VqZ4gn33tVJJWEYa8d3@cz'): Merchant {
  return {
    uid,
    name: 'Albert',
    logo: 'https://cdn.example.test/logos/albert.png',
    url: 'https://albert.example.test',
    categoryName: 'Groceries',
    fetchedAt: T0,
    invalidationItemId: 42,
  }
}

export function exampleEnrichedTransaction(): EnrichedTransaction {
  const raw = exampleRawCardTransaction()
  const shop = exampleShop()
  const merchant = exampleMerchant()
  return {
    transactionId: raw.transactionId,
    raw,
    status: 'MATCHED',
    rejectReason: null,
    handle: shop.uid,
    shopUid: shop.uid,
    merchantUid: merchant.uid,
    shop,
    merchant,
    enrichedAt: T0 + 300,
    lookup: {
      operation: 'findByCardTransactionBatch',
      attempts: 1,
      shopSource: 'TABLE',
      merchantSource: 'API',
    },
    backfill: null,
  }
}

export function exampleInvalidation(): Invalidation {
  return {
    itemId: 1001,
    level: 'SHOP',
    type: 'update',
    entityKey: 'A987AKnMPJ0CR9PZo1Jy5A',
    seenAt: T0,
    feedCurrentTime: '2026-01-31T14:30:00Z',
  }
}

export function exampleInvalidationCursor(): InvalidationCursor {
  return { feed: 'enrichment-v5', lastItemId: 1001, feedCurrentTime: '2026-01-31T14:30:00Z', updatedAt: T0 }
}

export function exampleMerchantDataFetched(): MerchantDataFetched {
  return {
    entityType: 'SHOP',
    uid: 'A987AKnMPJ0CR9PZo1Jy5A',
    shop: exampleShop(),
    merchant: null,
    notFound: false,
    fetchedBy: 'ingest-1',
  }
}

export function exampleConsent(): Consent {
  // Shape of a token-cipher envelope (not a real one: example data only).
  const secret = (seed: number) =>
    `v1.k0123456789abcdef.${'A'.repeat(16)}.${'B'.repeat(seed + 10)}.${'C'.repeat(22)}`
  return {
    consentId: 'consent-1',
    customerId: 'cust-1',
    bank: null,
    status: 'ACTIVE',
    statusReason: null,
    scopes: ['accounts'],
    accessToken: secret(1),
    refreshToken: secret(2),
    accessTokenExpiresAt: T0 + 300_000,
    refreshTokenExpiresAt: T0 + 90 * 86_400_000,
    tokenIssuedAt: T0,
    grantedAt: T0,
    expiresAt: T0 + 90 * 86_400_000,
    expiryNotifiedAt: null,
    authorizationStateHash: null,
    accounts: [
      {
        accountId: 'acc-1',
        currency: 'CZK',
        lastBookingDate: '2026-01-30',
        overlapDays: 3,
        lastSyncedAt: T0,
        pendingEntryReferences: ['entry-10'],
        seenEntries: [{ entryReference: 'entry-10', date: '2026-01-29' }],
      },
    ],
    version: 7,
    updatedAt: T0,
  }
}

export function exampleBankTransaction(): BankTransaction {
  return {
    consentId: 'consent-1',
    accountId: 'acc-1',
    entryReference: 'entry-9',
    entryReferenceFromBank: true,
    changeType: 'ADDED',
    status: 'BOOKED',
    amount: '1500.00',
    currency: 'CZK',
    creditDebit: 'DEBIT',
    reversal: null,
    bookingDate: '2026-01-31',
    valueDate: '2026-01-31',
    bankTransactionCode: '10000101000',
    counterpartyName: 'PRAZSKA ENERGETIKA',
    counterpartyIban: 'CZ6508000000192000145399',
    counterpartyAccountPrefix: null,
    counterpartyAccountNumber: null,
    counterpartyBankCode: '0800',
    counterpartyBic: null,
    variableSymbol: '1234567890',
    constantSymbol: '0308',
    specificSymbol: null,
    endToEndId: null,
    remittanceInformation: 'Zaloha elektrina 01/2026',
    additionalInformation: null,
    isCardPayment: false,
    cardScheme: null,
    rawJson: '{"entryReference":"entry-9"}',
    transactionId: 'tx-transfer-0001',
    fetchedAt: T0 + 60_000,
  }
}
