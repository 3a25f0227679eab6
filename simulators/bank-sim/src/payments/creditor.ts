import { compactIban, czechBank, isValidCzechAccount, isValidIban, parseCzechIban, parseCzechNationalNumber, type CzechAccount } from '../core/bank-codes.ts'
import type { CobsErrorItem } from '../errors.ts'

/** What the bank makes of a request's creditor account and agent. */
export interface ResolvedCreditor {
  iban?: string
  /** Set for Czech accounts (from a CZ IBAN or a national number). */
  czech?: CzechAccount
  bic?: string
  /** Country of the creditor's bank: IBAN country, else BIC country. */
  country?: string
}

interface CreditorInput {
  creditorAccount?: { identification?: { iban?: unknown; other?: { identification?: unknown } } }
  creditorAgent?: { financialInstitutionIdentification?: { bic?: unknown; clearingSystemMemberIdentification?: { memberIdentification?: unknown } } }
}

/**
 * Reads the creditor account: an IBAN (checked with mod 97; Czech ones also with
 * the bank's mod-11 rule and the bank code list), or a Czech national number
 * `[prefix-]number/bankCode` (the bank code may come from the agent), or another
 * national number for foreign payments (then the agent's BIC names the bank).
 */
export function resolveCreditor(input: CreditorInput): { creditor?: ResolvedCreditor; errors: CobsErrorItem[] } {
  const ident = input.creditorAccount?.identification
  const fi = input.creditorAgent?.financialInstitutionIdentification
  const bic = typeof fi?.bic === 'string' && fi.bic !== '' ? fi.bic.toUpperCase() : undefined
  if (bic !== undefined && !/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic)) {
    return { errors: [{ error: 'RC07', scope: 'creditorAgent.financialInstitutionIdentification.bic', message: `BIC ${bic} is not a valid BIC` }] }
  }
  const agentBankCode = typeof fi?.clearingSystemMemberIdentification?.memberIdentification === 'string' ? fi.clearingSystemMemberIdentification.memberIdentification : undefined
  if (!ident || (ident.iban === undefined && ident.other?.identification === undefined)) {
    return { errors: [{ error: 'FIELD_MISSING', scope: 'creditorAccount.identification', message: 'creditorAccount.identification needs iban or other.identification' }] }
  }
  if (ident.iban !== undefined) {
    if (typeof ident.iban !== 'string' || !isValidIban(ident.iban)) {
      return { errors: [{ error: 'AC03', scope: 'creditorAccount.identification.iban', message: `creditor IBAN ${String(ident.iban)} fails the IBAN check` }] }
    }
    const iban = compactIban(ident.iban)
    const country = iban.slice(0, 2)
    if (country === 'CZ') {
      const czech = parseCzechIban(iban)
      if (!czech || !isValidCzechAccount(czech)) return { errors: [{ error: 'AC03', scope: 'creditorAccount.identification.iban', message: `creditor IBAN ${iban} holds an invalid Czech account number` }] }
      if (!czechBank(czech.bankCode)) return { errors: [{ error: 'RC10', scope: 'creditorAccount.identification.iban', message: `bank code ${czech.bankCode} is not a known Czech bank` }] }
      return { creditor: { iban, czech, country, bic: bic ?? czechBank(czech.bankCode)?.bic }, errors: [] }
    }
    return { creditor: { iban, country, bic }, errors: [] }
  }
  const other = ident.other?.identification
  if (typeof other !== 'string' || other.trim() === '') {
    return { errors: [{ error: 'FIELD_INVALID', scope: 'creditorAccount.identification.other.identification', message: 'other.identification must be a non-empty string' }] }
  }
  const czech = parseCzechNationalNumber(other, agentBankCode)
  if (czech) {
    if (!czechBank(czech.bankCode)) return { errors: [{ error: 'RC10', scope: 'creditorAccount.identification.other.identification', message: `bank code ${czech.bankCode} is not a known Czech bank` }] }
    if (!isValidCzechAccount(czech)) return { errors: [{ error: 'AC03', scope: 'creditorAccount.identification.other.identification', message: `${other} fails the Czech account number check` }] }
    return { creditor: { czech, country: 'CZ', bic: bic ?? czechBank(czech.bankCode)?.bic }, errors: [] }
  }
  return { creditor: { country: bic ? bic.slice(4, 6) : undefined, bic }, errors: [] }
}
