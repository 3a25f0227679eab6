import { czechAccountNumber } from './bank-numbers.ts'
import { COUNTRIES } from './catalog/places.ts'
import { accountKeyCzech } from './dataset.ts'
import type { CardMatchRule, SimDataset } from './dataset.ts'
import { Rng, hashInts } from './random.ts'
import { padDigits } from './text.ts'
import type { BankAccount, SimShop } from './types.ts'
import { SimDataError } from './errors.ts'

export type SampleKind = 'card' | 'transfer'
export type SampleOutcome = 'found' | 'notFound' | 'invalid'
export type SampleOperation = 'findByCardTransaction' | 'findByBankTransfer/certis' | 'findByBankTransfer/sepa' | 'findByBankTransfer/uk'

export type SampleExpectation =
  | { outcome: 'found'; shopIndex: number; shopUid: string; merchantUid: string; rule: CardMatchRule | 'account' | 'iban' }
  | { outcome: 'notFound' }
  /** `parameter` is absent when the input as a whole is wrong (nothing identifying). */
  | { outcome: 'invalid'; code: string; parameter?: string }

export interface Sample {
  kind: SampleKind
  operation: SampleOperation
  /** What the sample exercises, for humans. */
  description: string
  /** Query parameters as a client sends them ('' = present but empty). */
  input: Record<string, string>
  expected: SampleExpectation
}

export interface SampleOptions {
  /** Default 20. */
  count?: number
  /** Default: both (about 70 % card). */
  kind?: SampleKind
  /** Default: all three (about 70 % found, 20 % not found, 10 % invalid). */
  outcome?: SampleOutcome
  /** Varies the samples; the same seed and options give the same samples. Default 0. */
  seed?: number
}

const SAMPLE_NS = 99

/**
 * Sample lookup inputs with the outcome each must have against the base data set
 * (a simulator that mutates its data adjusts the expectations). The expectations
 * come from how each input was built (from a known shop, or deliberately unknown,
 * or deliberately malformed), not from running the matcher.
 */
export function generateSamples(dataset: SimDataset, options: SampleOptions = {}): Sample[] {
  const count = options.count ?? 20
  if (!Number.isInteger(count) || count < 0 || count > 10_000) throw new SimDataError(`sample count must be an integer from 0 to 10000, got ${count}`, { code: 'SIM_DATA_INVALID_ARGUMENT', details: { count } })
  const samples: Sample[] = []
  for (let i = 0; i < count; i++) {
    const rng = new Rng(hashInts(dataset.seed, SAMPLE_NS, options.seed ?? 0, i))
    const kind = options.kind ?? (rng.chance(0.7) ? 'card' : 'transfer')
    const outcome = options.outcome ?? rng.weighted<SampleOutcome>(['found', 'notFound', 'invalid'], [70, 20, 10])
    samples.push(kind === 'card' ? cardSample(dataset, rng, outcome) : transferSample(dataset, rng, outcome))
  }
  return samples
}

type FoundExpectation = Extract<SampleExpectation, { outcome: 'found' }>

function found(dataset: SimDataset, shopIndex: number, rule: FoundExpectation['rule']): FoundExpectation {
  const shop = dataset.shop(shopIndex)
  return { outcome: 'found', shopIndex, shopUid: shop.uid, merchantUid: shop.merchantUid, rule }
}

function transactionExtras(rng: Rng, shop: SimShop): Record<string, string> {
  const currency = COUNTRIES.find((c) => c.code === shop.card.country)?.currency ?? 'EUR'
  const day = rng.int(1, 28)
  return {
    amount: `${rng.int(1, 4999)}.${padDigits(rng.int(0, 99), 2)}`,
    currency,
    dateTime: `2026-10-${padDigits(day, 2)}T${padDigits(rng.int(6, 21), 2)}:${padDigits(rng.int(0, 59), 2)}:00+01:00`,
    cardBin: `${rng.pick(['4', '5'])}${padDigits(rng.int(0, 99999), 5)}`,
  }
}

function cardSample(dataset: SimDataset, rng: Rng, outcome: SampleOutcome): Sample {
  const shop = dataset.shop(rng.int(0, dataset.shopCount - 1))
  const terminalId = rng.pick(shop.card.terminalIds)
  const base = { kind: 'card' as const, operation: 'findByCardTransaction' as const }
  if (outcome === 'notFound') {
    return {
      ...base,
      description: 'unknown terminal, acceptor id and name',
      input: { merchantId: `999${padDigits(rng.int(0, 999_999), 6)}${padDigits(rng.int(0, 999_999), 6)}`, terminalId: `ZZ${padDigits(rng.int(0, 999_999), 6)}`, description: `NEZNAMY OBCHODNIK ${rng.int(1, 9999)}`, city: 'HORNI DOLNI', country: 'CZ', mcc: '5999' },
      expected: { outcome: 'notFound' },
    }
  }
  if (outcome === 'invalid') {
    const extras = transactionExtras(rng, shop)
    const valid: Record<string, string> = { terminalId, ...extras }
    const cases: Array<[string, Record<string, string>, string, string | undefined]> = [
      ['MCC with a letter', { ...valid, mcc: '54A1' }, 'INVALID_PARAMETER', 'mcc'],
      ['alpha-3 country code', { ...valid, country: 'CZE' }, 'INVALID_PARAMETER', 'country'],
      ['amount with a decimal comma', { ...valid, amount: '12,50' }, 'INVALID_PARAMETER', 'amount'],
      ['unparsable date-time', { ...valid, dateTime: 'yesterday noon' }, 'INVALID_PARAMETER', 'dateTime'],
      ['card BIN of 4 digits', { ...valid, cardBin: '4111' }, 'INVALID_PARAMETER', 'cardBin'],
      ['nothing identifying', { amount: extras.amount as string, currency: extras.currency as string }, 'NO_IDENTIFYING_PARAMETER', undefined],
    ]
    const [description, input, code, parameter] = rng.pick(cases)
    return { ...base, description, input, expected: parameter === undefined ? { outcome: 'invalid', code } : { outcome: 'invalid', code, parameter } }
  }
  const variant = rng.pick(['full', 'terminal', 'merchantId', 'name+city'] as const)
  if (variant === 'merchantId' && !shop.card.merchantIdShared) {
    // An empty terminal id is sent (the client has the field, it is empty): it must not block the match.
    return { ...base, description: 'acceptor id of a single shop, empty terminal id', input: { merchantId: shop.card.merchantId, terminalId: '', ...transactionExtras(rng, shop) }, expected: found(dataset, shop.index, 'merchantId') }
  }
  if (variant === 'name+city' && dataset.shopIndexByAcceptorName(shop.card.acceptorName, shop.card.acceptorCity) === shop.index) {
    return {
      ...base,
      description: 'printed name and city only (city in lower case)',
      input: { description: shop.card.acceptorName, city: shop.card.acceptorCity.toLowerCase(), country: shop.card.country, mcc: shop.card.mcc },
      expected: found(dataset, shop.index, 'name+city'),
    }
  }
  if (variant === 'terminal') {
    return { ...base, description: 'terminal id only', input: { terminalId, ...transactionExtras(rng, shop) }, expected: found(dataset, shop.index, 'terminalId') }
  }
  return {
    ...base,
    description: 'everything a card processor sends',
    input: {
      merchantId: shop.card.merchantId,
      terminalId,
      description: shop.card.acceptorName,
      city: shop.card.acceptorCity,
      country: shop.card.country,
      postalCode: shop.card.postalCode,
      mcc: shop.card.mcc,
      acquirerId: shop.card.acquirerId,
      ...transactionExtras(rng, shop),
    },
    expected: found(dataset, shop.index, 'merchantId+terminalId'),
  }
}

function groupedIban(iban: string): string {
  return iban.replace(/(.{4})/g, '$1 ').trim()
}

function transferSample(dataset: SimDataset, rng: Rng, outcome: SampleOutcome): Sample {
  if (outcome === 'notFound') {
    for (;;) {
      const number = czechAccountNumber(padDigits(rng.int(0, 99_999_999), 8)).replace(/^0+/, '')
      if (dataset.merchantIndexByAccountKey(accountKeyCzech(undefined, number, '0800')) !== undefined) continue
      return {
        kind: 'transfer',
        operation: 'findByBankTransfer/certis',
        description: 'valid Czech account that belongs to no merchant',
        input: { accountNumber: number, bankCode: '0800', variableSymbol: String(rng.int(1, 99_999_999)), amount: '250.00', currency: 'CZK' },
        expected: { outcome: 'notFound' },
      }
    }
  }
  if (outcome === 'invalid') {
    const cases: Sample[] = [
      { kind: 'transfer', operation: 'findByBankTransfer/certis', description: 'bank code of 2 digits', input: { accountNumber: '19', bankCode: '08' }, expected: { outcome: 'invalid', code: 'INVALID_PARAMETER', parameter: 'bankCode' } },
      { kind: 'transfer', operation: 'findByBankTransfer/sepa', description: 'IBAN with wrong check digits', input: { iban: 'CZ0008000000001234567899', amount: '10.00', currency: 'EUR' }, expected: { outcome: 'invalid', code: 'INVALID_PARAMETER', parameter: 'iban' } },
      { kind: 'transfer', operation: 'findByBankTransfer/uk', description: 'sort code of 5 digits', input: { sortCode: '12345', accountNumber: '12345678' }, expected: { outcome: 'invalid', code: 'INVALID_PARAMETER', parameter: 'sortCode' } },
      { kind: 'transfer', operation: 'findByBankTransfer/certis', description: 'account number with letters', input: { accountNumber: '12AB56', bankCode: '0800' }, expected: { outcome: 'invalid', code: 'INVALID_PARAMETER', parameter: 'accountNumber' } },
    ]
    return rng.pick(cases)
  }
  const merchant = dataset.merchant(rng.int(0, dataset.merchantCount - 1))
  const account = rng.pick(merchant.bankAccounts) as BankAccount
  const expected = found(dataset, merchant.firstShop, 'account')
  const amount = `${rng.int(1, 99_999)}.${padDigits(rng.int(0, 99), 2)}`
  switch (account.scheme) {
    case 'certis':
      if (rng.chance(0.25)) {
        return { kind: 'transfer', operation: 'findByBankTransfer/certis', description: 'Czech transfer given by IBAN', input: { iban: account.iban, amount, currency: account.currency }, expected: { ...expected, rule: 'iban' } }
      }
      return {
        kind: 'transfer',
        operation: 'findByBankTransfer/certis',
        description: 'Czech domestic account with symbols',
        input: {
          ...(account.prefix === undefined ? {} : { accountPrefix: account.prefix }),
          accountNumber: account.number,
          bankCode: account.bankCode,
          name: merchant.name,
          variableSymbol: String(rng.int(1, 9_999_999_999)),
          constantSymbol: '0308',
          specificSymbol: '',
          message: `Platba faktury ${rng.int(100000, 999999)}`,
          amount,
          currency: account.currency,
        },
        expected,
      }
    case 'uk':
      return {
        kind: 'transfer',
        operation: 'findByBankTransfer/uk',
        description: 'UK sort code and account number',
        input: { sortCode: account.sortCode.replace(/(\d{2})(\d{2})(\d{2})/, '$1-$2-$3'), accountNumber: account.number, name: merchant.name, reference: `INV ${rng.int(1000, 9999)}`, amount, currency: 'GBP' },
        expected,
      }
    default:
      return {
        kind: 'transfer',
        operation: 'findByBankTransfer/sepa',
        description: 'SEPA transfer, IBAN printed in groups of four',
        input: { iban: groupedIban(account.iban), bic: account.bic, name: merchant.name, remittanceInformation: `Order ${rng.int(10000, 99999)}`, amount, currency: account.currency },
        expected: { ...expected, rule: 'iban' },
      }
  }
}
