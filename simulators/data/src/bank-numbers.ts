import { SimDataError } from './errors.ts'

/**
 * Check-digit arithmetic of bank account identifiers, so that generated accounts
 * pass the validation real banking software applies.
 */

/** Weights of the Czech account number check (ČNB decree 169/2011), left to right, for 10 digits. */
const CZ_WEIGHTS = [6, 3, 7, 9, 10, 5, 8, 4, 2, 1]

/** True when a Czech account number or prefix (without leading-zero padding) passes the modulo-11 check. */
export function isValidCzechAccountPart(digits: string): boolean {
  if (!/^[0-9]{1,10}$/.test(digits)) return false
  const padded = digits.padStart(10, '0')
  let sum = 0
  for (let i = 0; i < 10; i++) sum += Number(padded[i]) * (CZ_WEIGHTS[i] as number)
  return sum % 11 === 0
}

/**
 * Builds a valid 10-digit Czech account number from 8 free digits: the 9th digit
 * is the smallest that lets a check digit (weight 1) exist, the 10th is the check.
 * Distinct free digits give distinct numbers.
 */
export function czechAccountNumber(freeDigits: string): string {
  if (!/^[0-9]{8}$/.test(freeDigits)) throw new SimDataError(`expected 8 digits, got ${freeDigits}`, { code: 'SIM_DATA_INVALID_ARGUMENT', details: { freeDigits } })
  let base = 0
  for (let i = 0; i < 8; i++) base += Number(freeDigits[i]) * (CZ_WEIGHTS[i] as number)
  for (let ninth = 0; ninth <= 9; ninth++) {
    const check = (11 - ((base + ninth * 2) % 11)) % 11
    if (check <= 9) return `${freeDigits}${ninth}${check}`
  }
  // Unreachable: 2·ninth mod 11 takes ten distinct values, at most one needs check 10.
  throw new Error(`no valid Czech account number for ${freeDigits}`)
}

/** ISO 13616 check digits for a country code and BBAN. */
export function ibanCheckDigits(country: string, bban: string): string {
  const rearranged = `${bban}${country}00`
  return String(98 - mod97(rearranged)).padStart(2, '0')
}

export function makeIban(country: string, bban: string): string {
  return `${country}${ibanCheckDigits(country, bban)}${bban}`
}

/** Compact form of an IBAN (no spaces, upper case). */
export function compactIban(iban: string): string {
  return iban.replace(/\s+/g, '').toUpperCase()
}

/** True when the IBAN's structure and check digits are valid (ISO 13616 mod 97). */
export function isValidIban(iban: string): boolean {
  const compact = compactIban(iban)
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$/.test(compact)) return false
  return mod97(compact.slice(4) + compact.slice(0, 4)) === 1
}

function mod97(text: string): number {
  let rest = 0
  for (const ch of text) {
    const code = ch.charCodeAt(0)
    const value = code >= 65 ? String(code - 55) : ch
    for (const digit of value) rest = (rest * 10 + Number(digit)) % 97
  }
  return rest
}
