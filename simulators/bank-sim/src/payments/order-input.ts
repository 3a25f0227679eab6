import { bankDate, isIsoDate } from '../core/bank-dates.ts'
import { isValidAmount, toMinor } from '../core/money.ts'
import { BankApiError, type CobsErrorItem } from '../errors.ts'
import { BodyReader, SWIFT_TEXT, SYMBOL } from '../http/body-reader.ts'
import type { BankState } from '../data/bank-state.ts'
import type { Remittance } from '../data/ledger-entry.ts'
import type { SimAccount } from '../data/world.ts'
import type { Consent } from '../oauth/token-service.ts'
import { resolveCreditor, type ResolvedCreditor } from './creditor.ts'

/** The parts payments and standing orders share, validated and normalised. */
export interface OrderInput {
  instructionId: string
  amountMinor: number
  currency: string
  debtor: SimAccount
  creditor: ResolvedCreditor
  creditorName?: string
  requestedExecutionDate?: string
  remittance?: Remittance
  /** Validated request fields to echo in responses. */
  echo: Record<string, unknown>
}

function party(reader: BodyReader, path: string): Record<string, unknown> | undefined {
  if (!reader.object(path)) return undefined
  const name = reader.string(`${path}.name`, { max: 140 })
  if (name !== undefined && !SWIFT_TEXT.test(name)) reader.errors.push({ error: 'RR10', scope: `${path}.name`, message: `${path}.name holds characters outside the SWIFT character set (no diacritics)` })
  const address: Record<string, unknown> = {}
  for (const f of ['streetName', 'buildingNumber', 'postCode', 'townName']) {
    const v = reader.string(`${path}.postalAddress.${f}`, { max: 70 })
    if (v !== undefined) address[f] = v
  }
  const country = reader.string(`${path}.postalAddress.country`, { pattern: /^[A-Z]{2}$/, patternHint: 'an ISO 3166 alpha-2 code' })
  if (country !== undefined) address.country = country
  const lines = reader.raw(`${path}.postalAddress.addressLine`)
  if (Array.isArray(lines) && lines.every((l) => typeof l === 'string')) address.addressLine = lines
  return { ...(name !== undefined ? { name } : {}), ...(Object.keys(address).length > 0 ? { postalAddress: address } : {}) }
}

/**
 * Validates the shared order fields. Structural problems come back all at once
 * (400 with several errors); account problems follow the COBS codes: AC02 unknown
 * debtor, 403 AG01 debtor outside the consent, AC12 not a current account, AC10
 * debtor currency mismatch, AM11 amount in another currency, AM12 bad amount,
 * DT01 bad or past date, REC_SEND creditor = debtor, RR10 non-SWIFT text.
 */
export function readOrder(bank: BankState, consent: Consent, body: unknown, idPath: string): OrderInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BankApiError(400, { error: 'FF01', message: 'request body must be a JSON object' })
  }
  const r = new BodyReader(body)
  const instructionId = r.string(idPath, { required: true, max: 35 })
  r.object('amount.instructedAmount', { required: true })
  const value = r.raw('amount.instructedAmount.value')
  const currency = r.string('amount.instructedAmount.currency', { required: true, pattern: /^[A-Z]{3}$/, patternHint: 'an ISO 4217 code' })
  if (value === undefined) r.errors.push({ error: 'FIELD_MISSING', scope: 'amount.instructedAmount.value', message: 'amount.instructedAmount.value is required' })
  else if (!isValidAmount(value)) r.errors.push({ error: 'AM12', scope: 'amount.instructedAmount.value', message: `amount must be positive with at most 2 decimals, got ${JSON.stringify(value)}` })
  const debtorIban = r.string('debtorAccount.identification.iban', { required: true })
  const debtorCurrency = r.string('debtorAccount.currency', { pattern: /^[A-Z]{3}$/, patternHint: 'an ISO 4217 code' })
  r.object('creditorAccount', { required: true })
  const requestedExecutionDate = r.string('requestedExecutionDate')
  const today = bankDate(bank.clock.now())
  if (requestedExecutionDate !== undefined && !isIsoDate(requestedExecutionDate)) {
    r.errors.push({ error: 'DT01', scope: 'requestedExecutionDate', message: `requestedExecutionDate must be an ISO date YYYY-MM-DD, got ${JSON.stringify(requestedExecutionDate)}` })
  } else if (requestedExecutionDate !== undefined && requestedExecutionDate < today) {
    r.errors.push({ error: 'DT01', scope: 'requestedExecutionDate', message: `requestedExecutionDate ${requestedExecutionDate} is in the past (today is ${today})` })
  }
  const creditorParty = party(r, 'creditor')
  const ultimateDebtor = party(r, 'ultimateDebtor')
  const ultimateCreditor = party(r, 'ultimateCreditor')
  const unstructured = r.string('remittanceInformation.unstructured', { max: 140 })
  if (unstructured !== undefined && !SWIFT_TEXT.test(unstructured)) {
    r.errors.push({ error: 'RR10', scope: 'remittanceInformation.unstructured', message: 'remittanceInformation.unstructured holds characters outside the SWIFT character set (no diacritics)' })
  }
  const refs = r.raw('remittanceInformation.structured.creditorReferenceInformation.reference')
  const remittance: Remittance = {}
  if (refs !== undefined) {
    const list = Array.isArray(refs) ? refs : [refs]
    if (list.length > 3 || !list.every((x) => typeof x === 'string' && SYMBOL.test(x))) {
      r.errors.push({ error: 'FIELD_INVALID', scope: 'remittanceInformation.structured.creditorReferenceInformation.reference', message: 'reference must hold up to three of VS:<digits>, SS:<digits>, KS:<digits> (at most 10 digits each)' })
    } else {
      for (const s of list as string[]) {
        const [k, v] = s.split(':') as [string, string]
        remittance[k.toLowerCase() as 'vs' | 'ss' | 'ks'] = v
      }
    }
  }
  if (unstructured !== undefined) remittance.message = unstructured
  const { creditor, errors: creditorErrors } = r.errors.length === 0 ? resolveCreditor(body as Parameters<typeof resolveCreditor>[0]) : { creditor: undefined, errors: [] as CobsErrorItem[] }
  r.errors.push(...creditorErrors)
  if (r.errors.length > 0 || !creditor || instructionId === undefined || currency === undefined || debtorIban === undefined) throw new BankApiError(400, r.errors)

  const debtor = bank.accountByIban(debtorIban)
  if (!debtor) throw new BankApiError(400, { error: 'AC02', scope: 'debtorAccount.identification.iban', message: `debtor account ${debtorIban} is not an account of this bank` })
  if (debtor.userId === consent.userId && debtor.kind !== 'CURRENT') {
    throw new BankApiError(400, { error: 'AC12', scope: 'debtorAccount.identification.iban', message: 'payments can be made from current accounts only, not from credit-card accounts' })
  }
  if (debtor.userId !== consent.userId || !consent.accountIds.includes(debtor.id)) {
    throw new BankApiError(403, { error: 'AG01', scope: 'debtorAccount.identification.iban', message: 'the debtor account is not part of the consent given to this application' })
  }
  if (debtorCurrency !== undefined && debtorCurrency !== debtor.currency) {
    throw new BankApiError(400, { error: 'AC10', scope: 'debtorAccount.currency', parameters: { CURRENCY_ALLOWED: debtor.currency }, message: `debtorAccount.currency ${debtorCurrency} is not the account's currency ${debtor.currency}` })
  }
  if (currency !== debtor.currency) {
    throw new BankApiError(400, { error: 'AM11', scope: 'amount.instructedAmount.currency', parameters: { CURRENCY_ALLOWED: debtor.currency }, message: `the amount must be in the account's currency ${debtor.currency} (no conversion), got ${currency}` })
  }
  if (creditor.iban === debtor.iban || (creditor.czech?.bankCode === '5500' && creditor.czech.number === debtor.number && (creditor.czech.prefix || '') === debtor.prefix)) {
    throw new BankApiError(400, { error: 'REC_SEND', scope: 'creditorAccount', message: 'creditor account is the debtor account' })
  }
  const echo: Record<string, unknown> = {
    amount: { instructedAmount: { value, currency } },
    debtorAccount: { identification: { iban: debtor.iban }, currency: debtor.currency },
    creditorAccount: {
      identification: creditor.iban !== undefined ? { iban: creditor.iban } : { other: { identification: String(r.raw('creditorAccount.identification.other.identification')) } },
    },
  }
  if (requestedExecutionDate !== undefined) echo.requestedExecutionDate = requestedExecutionDate
  if (creditor.bic !== undefined || creditor.czech) {
    echo.creditorAgent = {
      financialInstitutionIdentification: {
        ...(creditor.bic !== undefined ? { bic: creditor.bic } : {}),
        ...(creditor.czech ? { clearingSystemMemberIdentification: { memberIdentification: creditor.czech.bankCode } } : {}),
      },
    }
  }
  if (creditorParty) echo.creditor = creditorParty
  if (ultimateDebtor) echo.ultimateDebtor = ultimateDebtor
  if (ultimateCreditor) echo.ultimateCreditor = ultimateCreditor
  const symbols = (['vs', 'ss', 'ks'] as const).filter((k) => remittance[k] !== undefined).map((k) => `${k.toUpperCase()}:${remittance[k]}`)
  if (unstructured !== undefined || symbols.length > 0) {
    echo.remittanceInformation = {
      ...(unstructured !== undefined ? { unstructured } : {}),
      ...(symbols.length > 0 ? { structured: { creditorReferenceInformation: { reference: symbols } } } : {}),
    }
  }
  return {
    instructionId,
    amountMinor: toMinor(value as number),
    currency,
    debtor,
    creditor,
    creditorName: typeof creditorParty?.name === 'string' ? creditorParty.name : undefined,
    requestedExecutionDate,
    remittance: Object.keys(remittance).length > 0 ? remittance : undefined,
    echo,
  }
}
