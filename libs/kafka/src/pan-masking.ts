/**
 * Card numbers (PANs) must not be kept where the pipeline stores records it could
 * not process: a full card number sent by mistake in `cardBin` or a description
 * would otherwise sit in the DLQ (30 days) and in every tool that reads it.
 *
 * Masking works on the record's bytes and keeps their length: each masked digit
 * becomes '*', so an Avro value stays decodable (strings are length-prefixed and
 * both characters are one byte) and the DLQ reason can still say exactly what was
 * wrong with which field. Like PCI DSS's display rule, the first six and last four
 * digits stay; only Luhn-valid runs of 13 to 19 digits (optionally grouped by
 * single spaces or dashes) are touched, so offsets, amounts and ids are left alone.
 */

const ZERO = 0x30
const NINE = 0x39
const STAR = 0x2a
const SPACE = 0x20
const DASH = 0x2d

const isDigit = (b: number | undefined) => b !== undefined && b >= ZERO && b <= NINE

function luhnValid(digits: number[]): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits[digits.length - 1 - i]!
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

/**
 * A copy of `bytes` with every card number masked, and how many were masked;
 * `bytes` itself when none was found.
 */
export function maskPans(bytes: Buffer): { bytes: Buffer; masked: number } {
  let out: Buffer | undefined
  let masked = 0
  let i = 0
  while (i < bytes.length) {
    if (!isDigit(bytes[i]) || isDigit(bytes[i - 1])) {
      i++
      continue
    }
    // A run of digits with single separators between them.
    const positions: number[] = []
    let j = i
    while (j < bytes.length && positions.length < 20) {
      if (isDigit(bytes[j])) {
        positions.push(j)
        j++
      } else if ((bytes[j] === SPACE || bytes[j] === DASH) && isDigit(bytes[j + 1]) && isDigit(bytes[j - 1])) {
        j++
      } else break
    }
    const digits = positions.map((p) => bytes[p]! - ZERO)
    if (positions.length >= 13 && positions.length <= 19 && luhnValid(digits)) {
      out ??= Buffer.from(bytes)
      for (const p of positions.slice(6, positions.length - 4)) out[p] = STAR
      masked++
    }
    i = j + 1
  }
  return { bytes: out ?? bytes, masked }
}

/** `text` with every card number masked (see maskPans). */
export function maskPansInText(text: string): string {
  const { bytes, masked } = maskPans(Buffer.from(text, 'utf8'))
  return masked === 0 ? text : bytes.toString('utf8')
}
