import type { Sample } from '@tep/sim-data'
import { rawTransactionProblems, type BankTransfer, type CardTransaction, type RawTransaction } from '@tep/schemas'

/** What the pipeline must make of a raw event built from a sample. */
export type PipelineOutcome = 'MATCHED' | 'NOT_FOUND' | 'REJECTED' | 'DLQ'

export interface RawSample {
  raw: RawTransaction
  expected: PipelineOutcome
  /** The shop the enrichment must resolve, for MATCHED. */
  expectedShopUid?: string
  sample: Sample
}

/**
 * Parameters that transaction-ingest does not forward verbatim: it sends the raw
 * event's normalised amount, currency and time (RawTransaction requires them in
 * canonical form). A sample whose only fault is one of these cannot be expressed
 * as a raw event, so `sampleToRaw` reports it as not representable.
 */
const NORMALISED_BY_INGEST = new Set(['amount', 'currency', 'dateTime'])

const DECIMAL = /^[0-9]+(\.[0-9]+)?$/
const CURRENCY = /^[A-Z]{3}$/

function field(input: Record<string, string>, key: string): string | null {
  // Absent in the sample = absent at the source (null); '' stays '' (present, empty).
  return Object.hasOwn(input, key) ? (input[key] as string) : null
}

function cardOf(input: Record<string, string>): CardTransaction {
  return {
    merchantId: field(input, 'merchantId'),
    terminalId: field(input, 'terminalId'),
    description: field(input, 'description'),
    street: null,
    city: field(input, 'city'),
    postalCode: field(input, 'postalCode'),
    country: field(input, 'country'),
    mcc: field(input, 'mcc'),
    acquirerId: field(input, 'acquirerId'),
    transactionAmount: field(input, 'amount'),
    transactionCurrency: field(input, 'currency'),
    localDateTime: field(input, 'dateTime'),
    processingCode: null,
    posEntryMode: null,
    cardBin: field(input, 'cardBin'),
  }
}

function transferOf(scheme: 'CERTIS' | 'SEPA' | 'UK', input: Record<string, string>): BankTransfer {
  // The free-text reference has a different name per scheme in the API and one
  // field (`message`) in RawTransaction.
  const message = field(input, 'message') ?? field(input, 'remittanceInformation') ?? field(input, 'reference')
  return {
    scheme,
    counterpartyName: field(input, 'name'),
    counterpartyAccountPrefix: field(input, 'accountPrefix'),
    counterpartyAccountNumber: field(input, 'accountNumber'),
    counterpartyBankCode: field(input, 'bankCode'),
    counterpartySortCode: field(input, 'sortCode'),
    counterpartyIban: field(input, 'iban'),
    counterpartyBic: field(input, 'bic'),
    counterpartyCity: null,
    counterpartyPostalCode: null,
    counterpartyCountry: null,
    variableSymbol: field(input, 'variableSymbol'),
    constantSymbol: field(input, 'constantSymbol'),
    specificSymbol: field(input, 'specificSymbol'),
    message,
    endToEndId: field(input, 'endToEndId'),
    paymentType: null,
  }
}

const SCHEMES = { 'findByBankTransfer/certis': 'CERTIS', 'findByBankTransfer/sepa': 'SEPA', 'findByBankTransfer/uk': 'UK' } as const

/**
 * Builds the raw event a card processor (or bank) would send for a simulator
 * sample, and the outcome the pipeline must produce for it. Returns undefined
 * for samples that cannot be expressed as a raw event (see NORMALISED_BY_INGEST).
 */
export function sampleToRaw(sample: Sample, options: { transactionId: string; now?: number; source?: string }): RawSample | undefined {
  const { expected } = sample
  if (expected.outcome === 'invalid' && expected.parameter !== undefined && NORMALISED_BY_INGEST.has(expected.parameter)) return undefined
  const now = options.now ?? Date.now()
  const amountIn = sample.input.amount
  const currencyIn = sample.input.currency
  const occurred = sample.input.dateTime ? Date.parse(sample.input.dateTime) : Number.NaN
  const raw: RawTransaction = {
    transactionId: options.transactionId,
    source: options.source ?? (sample.kind === 'card' ? 'CARD_PROCESSOR' : 'BANK_TRANSFERS'),
    sourceReference: null,
    customerId: null,
    accountId: null,
    occurredAt: Number.isNaN(occurred) ? now : occurred,
    receivedAt: now,
    amount: amountIn !== undefined && DECIMAL.test(amountIn) ? amountIn : '100.00',
    currency: currencyIn !== undefined && CURRENCY.test(currencyIn) ? currencyIn : sample.kind === 'transfer' && sample.operation.endsWith('sepa') ? 'EUR' : 'CZK',
    creditDebit: 'DEBIT',
    refresh: false,
    card: sample.kind === 'card' ? cardOf(sample.input) : null,
    transfer: sample.kind === 'transfer' ? transferOf(SCHEMES[sample.operation as keyof typeof SCHEMES], sample.input) : null,
  }
  // A raw event that breaks RawTransaction's own rules (a 4-digit card BIN, say)
  // never reaches the API: ingest dead-letters it as schema-invalid.
  if (rawTransactionProblems(raw).length > 0) return { raw, expected: 'DLQ', sample }
  switch (expected.outcome) {
    case 'found':
      return { raw, expected: 'MATCHED', expectedShopUid: expected.shopUid, sample }
    case 'notFound':
      return { raw, expected: 'NOT_FOUND', sample }
    case 'invalid':
      return { raw, expected: 'REJECTED', sample }
  }
}
