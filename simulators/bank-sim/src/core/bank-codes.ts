/**
 * Czech clearing bank codes the simulator knows, which of them take part in
 * instant payments, and account-number arithmetic (mod 11 for Czech numbers,
 * mod 97 for IBANs) so generated and submitted accounts are checked like a bank would.
 */

export const OWN_BANK_CODE = '5500'
export const OWN_BIC = 'RZBCCZPP'
export const INTERNAL_IBAN_PREFIX = 'CZ315500'

interface CzechBank {
  code: string
  bic: string
  name: string
  instant: boolean
}

/**
 * ASSUMPTION: the simulator's list of local banks. `instant: false` marks banks
 * whose customers cannot receive instant payments, so the NO_PART refusal has a
 * real cause to test against.
 */
export const CZECH_BANKS: readonly CzechBank[] = [
  { code: '0100', bic: 'KOMBCZPP', name: 'Komercni banka', instant: true },
  { code: '0300', bic: 'CEKOCZPP', name: 'CSOB', instant: true },
  { code: '0600', bic: 'AGBACZPP', name: 'MONETA Money Bank', instant: true },
  { code: '0800', bic: 'GIBACZPX', name: 'Ceska sporitelna', instant: true },
  { code: '2010', bic: 'FIOBCZPP', name: 'Fio banka', instant: true },
  { code: '2060', bic: 'CITFCZPP', name: 'Citfin', instant: false },
  { code: '2700', bic: 'BACXCZPP', name: 'UniCredit Bank', instant: true },
  { code: '3030', bic: 'AIRACZPP', name: 'Air Bank', instant: true },
  { code: '5500', bic: 'RZBCCZPP', name: 'Raiffeisenbank', instant: true },
  { code: '6210', bic: 'BREXCZPP', name: 'mBank', instant: true },
  { code: '7910', bic: 'DEUTCZPX', name: 'Deutsche Bank', instant: false },
  { code: '8090', bic: 'CZEECZPP', name: 'Ceska exportni banka', instant: false },
]

export function czechBank(code: string): CzechBank | undefined {
  return CZECH_BANKS.find((b) => b.code === code)
}

/** SEPA scheme countries (IBAN country codes). */
export const SEPA_COUNTRIES = new Set([
  'AD', 'AT', 'BE', 'BG', 'CH', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GB', 'GI', 'GR', 'HR', 'HU', 'IE', 'IS', 'IT', 'LI', 'LT',
  'LU', 'LV', 'MC', 'MT', 'NL', 'NO', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK', 'SM', 'VA',
])

/** EEA countries: a non-SEPA-conform payment there is `EXCT`, elsewhere `NXCT`. */
export const EEA_COUNTRIES = new Set([
  'AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU', 'IE', 'IS', 'IT', 'LI', 'LT', 'LU', 'LV', 'MT', 'NL',
  'NO', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK',
])

const CZ_WEIGHTS = [6, 3, 7, 9, 10, 5, 8, 4, 2, 1]

/** Modulo-11 check of a Czech account number or prefix (ČNB decree 169/2011). */
export function isValidCzechAccountPart(digits: string): boolean {
  if (!/^[0-9]{1,10}$/.test(digits)) return false
  const padded = digits.padStart(10, '0')
  let sum = 0
  for (let i = 0; i < 10; i++) sum += Number(padded[i]) * (CZ_WEIGHTS[i] as number)
  return sum % 11 === 0
}

/** A valid 10-digit Czech account number built from 8 free digits. */
export function czechAccountNumber(freeDigits: string): string {
  let base = 0
  for (let i = 0; i < 8; i++) base += Number(freeDigits[i]) * (CZ_WEIGHTS[i] as number)
  for (let ninth = 0; ninth <= 9; ninth++) {
    const check = (11 - ((base + ninth * 2) % 11)) % 11
    if (check <= 9) return `${freeDigits}${ninth}${check}`
  }
  throw new Error(`no valid Czech account number for ${freeDigits}`)
}

function mod97(text: string): number {
  let rest = 0
  for (const ch of text) {
    const code = ch.charCodeAt(0)
    const part = code >= 65 && code <= 90 ? String(code - 55) : ch
    for (const d of part) rest = (rest * 10 + Number(d)) % 97
  }
  return rest
}

export function makeIban(country: string, bban: string): string {
  const check = String(98 - mod97(`${bban}${country}00`)).padStart(2, '0')
  return `${country}${check}${bban}`
}

export function compactIban(iban: string): string {
  return iban.replace(/\s+/g, '').toUpperCase()
}

export function isValidIban(iban: string): boolean {
  const compact = compactIban(iban)
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$/.test(compact)) return false
  return mod97(compact.slice(4) + compact.slice(0, 4)) === 1
}

/** Czech IBAN from bank code, prefix and number: CZkk BBBB PPPPPP NNNNNNNNNN. */
export function czechIban(bankCode: string, prefix: string, number: string): string {
  return makeIban('CZ', `${bankCode}${prefix.padStart(6, '0')}${number.padStart(10, '0')}`)
}

export interface CzechAccount {
  prefix: string
  number: string
  bankCode: string
}

/** Splits a Czech IBAN into bank code, prefix and number (leading zeros dropped). */
export function parseCzechIban(iban: string): CzechAccount | undefined {
  const c = compactIban(iban)
  if (!c.startsWith('CZ') || c.length !== 24) return undefined
  return { bankCode: c.slice(4, 8), prefix: c.slice(8, 14).replace(/^0+/, ''), number: c.slice(14).replace(/^0+/, '') }
}

/**
 * Parses a Czech national account number `[prefix-]number[/bankCode]`. The bank
 * code may instead come from the creditor agent; undefined when the text is not one.
 */
export function parseCzechNationalNumber(text: string, bankCodeFromAgent?: string): CzechAccount | undefined {
  const m = /^(?:(\d{1,6})-)?(\d{2,10})(?:\/(\d{4}))?$/.exec(text.trim())
  if (!m) return undefined
  const bankCode = m[3] ?? bankCodeFromAgent
  if (!bankCode) return undefined
  return { prefix: m[1] ?? '', number: m[2] as string, bankCode }
}

export function isValidCzechAccount(account: CzechAccount): boolean {
  return (account.prefix === '' || isValidCzechAccountPart(account.prefix)) && isValidCzechAccountPart(account.number)
}
