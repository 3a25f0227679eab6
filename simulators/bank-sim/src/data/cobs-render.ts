import { bankDate } from '../core/bank-dates.ts'
import { fromMinor } from '../core/money.ts'
import { OWN_BANK_CODE, OWN_BIC } from '../core/bank-codes.ts'
import type { Balances } from './ledger.ts'
import { amountAt, type Counterparty, type LedgerEntry } from './ledger-entry.ts'
import type { SimAccount } from './world.ts'

/** COBS account list item. */
export function renderAccount(account: SimAccount): Record<string, unknown> {
  return {
    id: account.id,
    identification: { iban: account.iban, other: account.prefix ? `${account.prefix}-${account.number}` : account.number },
    currency: account.currency,
    servicer: { bankCode: OWN_BANK_CODE, countryCode: 'CZ', bic: OWN_BIC },
    nameI18N: account.name,
    productI18N: account.product,
    cashAccountType: account.kind === 'CREDIT_CARD' ? 'CARD' : 'CACC',
  }
}

function amount(minor: number, currency: string): { value: number; currency: string } {
  return { value: fromMinor(Math.abs(minor)), currency }
}

function balance(code: string, minor: number, account: SimAccount, at: number): Record<string, unknown> {
  return {
    type: { codeOrProprietary: { code } },
    amount: amount(minor, account.currency),
    creditDebitIndicator: minor < 0 ? 'DBIT' : 'CRDT',
    ...(account.creditLimitMinor > 0 ? { creditLine: { included: code === 'CLAV', amount: amount(account.creditLimitMinor, account.currency) } } : {}),
    date: { dateTime: new Date(at).toISOString() },
  }
}

export function renderBalances(account: SimAccount, b: Balances, now: number, startOfToday: number): Record<string, unknown> {
  return {
    ...renderAccount(account),
    balances: [balance('CLBD', b.bookedMinor, account, now), balance('PRCD', b.previousDayMinor, account, startOfToday - 1), balance('CLAV', b.availableMinor, account, now)],
  }
}

function partyAccount(c: Counterparty): Record<string, unknown> | undefined {
  if (c.iban === undefined && c.number === undefined) return undefined
  const identification: Record<string, unknown> = {}
  if (c.iban !== undefined) identification.iban = c.iban
  if (c.number !== undefined) identification.other = { identification: c.prefix ? `${c.prefix}-${c.number}` : c.number }
  return { identification }
}

function agent(c: Counterparty): Record<string, unknown> | undefined {
  if (c.bic === undefined && c.bankCode === undefined) return undefined
  return {
    financialInstitutionIdentification: {
      ...(c.bic !== undefined ? { bic: c.bic } : {}),
      ...(c.bankCode !== undefined ? { clearingSystemMemberIdentification: { memberIdentification: c.bankCode } } : {}),
    },
  }
}

function own(account: SimAccount): Counterparty {
  return { name: account.name, iban: account.iban, number: account.number, prefix: account.prefix || undefined, bankCode: OWN_BANK_CODE, bic: OWN_BIC }
}

function party(c: Counterparty): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (c.name !== undefined) out.name = c.name
  if (c.townName !== undefined || c.country !== undefined) out.postalAddress = { ...(c.townName ? { townName: c.townName } : {}), ...(c.country ? { country: c.country } : {}) }
  return out
}

/**
 * COBS transaction item. Card acceptor data sits where the OpenAPI document says
 * (creditor name and postal address, and the `additionalTransactionInformation`
 * line with MCC, TID and MID), because COBS has no merchant fields.
 */
export function renderTransaction(entry: LedgerEntry, account: SimAccount, now: number): Record<string, unknown> {
  const booked = entry.bookAt <= now
  const shownMinor = amountAt(entry, now)
  const bookingDate = bankDate(booked ? entry.bookAt : entry.at)
  const details: Record<string, unknown> = {}
  const references: Record<string, string> = { accountServicerReference: entry.entryReference }
  if (entry.endToEndId !== undefined) references.endToEndIdentification = entry.endToEndId
  if (entry.instructionId !== undefined) references.instructionIdentification = entry.instructionId
  const relatedParties: Record<string, unknown> = {}
  const relatedAgents: Record<string, unknown> = {}
  if (entry.card) {
    const { shop } = entry.card
    references.chequeNumber = entry.card.maskedPan
    references.clearingSystemReference = entry.card.scheme
    // A refund (CRDT) comes from the shop: the shop is then the debtor.
    const shopParty = { name: shop.acceptorName, postalAddress: { townName: shop.acceptorCity, country: shop.country } }
    const me = own(account)
    const refund = entry.direction === 'CRDT'
    relatedParties[refund ? 'debtor' : 'creditor'] = shopParty
    relatedParties[refund ? 'creditor' : 'debtor'] = party(me)
    relatedParties[refund ? 'creditorAccount' : 'debtorAccount'] = partyAccount(me)
    details.additionalTransactionInformation = `${refund ? 'Vraceni platby kartou' : 'Platba kartou'}; ${shop.acceptorName}; ${shop.acceptorCity}; ${shop.country}; MCC ${shop.mcc}; TID ${shop.terminalId}; MID ${shop.cardAcceptorId}`
    if (entry.card.original) {
      const { original } = entry.card
      const rate = shownMinor === entry.amountMinor ? original.rate : Math.round((shownMinor / original.amountMinor) * 10_000) / 10_000
      details.amountDetails = {
        instructedAmount: { amount: amount(original.amountMinor, original.currency) },
        counterValueAmount: {
          amount: amount(shownMinor, entry.currency),
          currencyExchange: { sourceCurrency: original.currency, targetCurrency: entry.currency, exchangeRate: rate },
        },
      }
    }
  } else if (entry.counterparty) {
    const them = entry.counterparty
    const me = own(account)
    const [debtor, creditor] = entry.direction === 'DBIT' ? [me, them] : [them, me]
    relatedParties.debtor = party(debtor)
    relatedParties.creditor = party(creditor)
    const da = partyAccount(debtor)
    const ca = partyAccount(creditor)
    if (da) relatedParties.debtorAccount = da
    if (ca) relatedParties.creditorAccount = ca
    const dAgent = agent(debtor)
    const cAgent = agent(creditor)
    if (dAgent) relatedAgents.debtorAgent = dAgent
    if (cAgent) relatedAgents.creditorAgent = cAgent
  }
  details.references = references
  if (Object.keys(relatedParties).length > 0) details.relatedParties = relatedParties
  if (Object.keys(relatedAgents).length > 0) details.relatedAgents = relatedAgents
  if (entry.remittance) {
    const symbols = [entry.remittance.vs && `VS:${entry.remittance.vs}`, entry.remittance.ss && `SS:${entry.remittance.ss}`, entry.remittance.ks && `KS:${entry.remittance.ks}`].filter(
      (s): s is string => typeof s === 'string',
    )
    details.remittanceInformation = {
      ...(entry.remittance.message !== undefined ? { unstructured: entry.remittance.message } : {}),
      ...(symbols.length > 0 ? { structured: { creditorReferenceInformation: { reference: symbols } } } : {}),
    }
  }
  if (entry.additionalInfo !== undefined && details.additionalTransactionInformation === undefined) details.additionalTransactionInformation = entry.additionalInfo
  return {
    entryReference: entry.entryReference,
    amount: amount(shownMinor, entry.currency),
    creditDebitIndicator: entry.direction,
    status: booked ? 'BOOK' : 'PDNG',
    bookingDate: { date: bookingDate },
    valueDate: { date: bookingDate },
    bankTransactionCode: { proprietary: { code: entry.code, issuer: 'CBA' } },
    entryDetails: { transactionDetails: details },
  }
}

/** Date used for ordering and for `dateFrom`: the booking date, or the authorization date while pending. */
export function effectiveDate(entry: LedgerEntry, now: number): string {
  return bankDate(entry.bookAt <= now ? entry.bookAt : entry.at)
}
