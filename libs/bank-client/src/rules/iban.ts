/** Removes spaces and upper-cases: IBANs are often written in groups of four. */
export function normalizeIban(iban: string): string {
  return iban.replace(/\s+/g, '').toUpperCase()
}

/** ISO 13616 shape and mod-97 check digits. Country-specific lengths are left to the bank. */
export function isValidIban(raw: string): boolean {
  const iban = normalizeIban(raw)
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let remainder = 0
  for (const ch of rearranged) {
    const digits = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch
    for (const d of digits) remainder = (remainder * 10 + Number(d)) % 97
  }
  return remainder === 1
}

/** The 4-digit Czech bank code inside a CZ IBAN (`CZkk BBBB ...`), or undefined for other countries. */
export function czechBankCodeOfIban(raw: string): string | undefined {
  const iban = normalizeIban(raw)
  return iban.startsWith('CZ') && iban.length >= 8 ? iban.slice(4, 8) : undefined
}

/**
 * Splits a Czech domestic account number `[prefix-]number/bankCode` (e.g. `19-2000145399/0800`).
 * Returns undefined when the text is not in that form.
 */
export function parseCzechAccountNumber(
  text: string,
): { prefix: string | undefined; number: string; bankCode: string } | undefined {
  const m = /^\s*(?:(\d{1,6})-)?(\d{2,10})\/(\d{4})\s*$/.exec(text)
  if (!m) return undefined
  return { prefix: m[1], number: m[2]!, bankCode: m[3]! }
}
