/**
 * Card numbers (PANs) must not be kept where the pipeline stores or prints what it
 * could not process: a full card number sent by mistake in `cardBin` or a
 * description would otherwise sit in the DLQ (30 days), in every tool that reads
 * it, and in the logs. The one implementation behind the DLQ (bytes, @tep/kafka)
 * and the logger's text masking (redaction.ts).
 *
 * What counts as a card number: 13 to 19 digits, written together or in groups
 * separated by single spaces or dashes, that pass the Luhn check. Masking keeps
 * the first six and last four digits (PCI DSS's display rule) and turns every
 * other digit into '*' in place, so the length never changes: an Avro value stays
 * decodable (strings are length-prefixed, both characters are one byte).
 *
 * Why every group-aligned window of a chain is tried: digit groups joined by one
 * space or dash form a chain ("ref 7 4111 1111 1111 1111", "4111111111111111 12/27"),
 * and the card number is some run of consecutive groups inside it, not
 * necessarily the whole chain. The earlier implementation tested only the whole
 * chain; the joined run failed Luhn and the card number passed in clear. A card
 * number glued to other digits without a separator is part of a longer number and
 * is not one (masking every 13-digit window of long ids would mask them all).
 * Luhn lets one random digit run in ten through, so some ids and 13-digit epoch
 * milliseconds are masked too; masking too much is the safe side.
 */

const ZERO = 0x30
const NINE = 0x39
const STAR = 0x2a
const SPACE = 0x20
const DASH = 0x2d
const MIN_DIGITS = 13
const MAX_DIGITS = 19

type CodeAt = (index: number) => number | undefined

const isDigit = (c: number | undefined): c is number => c !== undefined && c >= ZERO && c <= NINE
const isSeparator = (c: number | undefined) => c === SPACE || c === DASH

const DOUBLED = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9]

/**
 * Positions (indexes for `codeAt`) of the digits to mask, and how many card numbers
 * they belong to. Linear: a window never spans more than 19 digits, and each
 * window's Luhn sum comes from two prefix sums in constant time.
 */
export function findPanDigits(length: number, codeAt: CodeAt): { positions: Set<number>; found: number } {
  const positions = new Set<number>()
  let found = 0
  let i = 0
  while (i < length) {
    // A chain starts at a digit with no digit before it (i only ever lands past a chain).
    if (!isDigit(codeAt(i))) {
      i++
      continue
    }
    // The chain: its digits' positions, and its groups as [first, end) digit indexes.
    const digitAt: number[] = []
    const groups: Array<[number, number]> = []
    let j = i
    for (;;) {
      const first = digitAt.length
      for (let c = codeAt(j); isDigit(c); c = codeAt(++j)) digitAt.push(j)
      groups.push([first, digitAt.length])
      if (isSeparator(codeAt(j)) && isDigit(codeAt(j + 1))) j++
      else break
    }
    i = j
    const n = digitAt.length
    if (n < MIN_DIGITS) continue
    // Luhn: the rightmost digit is kept, every second one to its left doubled. Prefix
    // sums for both parities: `evenKept` keeps digits at even indexes and doubles the
    // odd ones, `oddKept` the other way round; a window ending at e uses the one whose
    // kept parity is that of e - 1.
    const evenKept = new Int32Array(n + 1)
    const oddKept = new Int32Array(n + 1)
    for (let k = 0; k < n; k++) {
      const d = codeAt(digitAt[k]!)! - ZERO
      evenKept[k + 1] = evenKept[k]! + (k % 2 === 0 ? d : DOUBLED[d]!)
      oddKept[k + 1] = oddKept[k]! + (k % 2 === 1 ? d : DOUBLED[d]!)
    }
    for (let a = 0; a < groups.length; a++) {
      const s = groups[a]![0]
      for (let b = a; b < groups.length; b++) {
        const e = groups[b]![1]
        if (e - s > MAX_DIGITS) break
        if (e - s < MIN_DIGITS) continue
        const sums = (e - 1) % 2 === 0 ? evenKept : oddKept
        if ((sums[e]! - sums[s]!) % 10 !== 0) continue
        found++
        for (let k = s + 6; k < e - 4; k++) positions.add(digitAt[k]!)
      }
    }
  }
  return { positions, found }
}

/**
 * A copy of `bytes` with every card number masked, and how many were masked;
 * `bytes` itself when none was found.
 */
export function maskPans(bytes: Buffer): { bytes: Buffer; masked: number } {
  const { positions, found } = findPanDigits(bytes.length, (i) => bytes[i])
  if (found === 0) return { bytes, masked: 0 }
  const out = Buffer.from(bytes)
  for (const p of positions) out[p] = STAR
  return { bytes: out, masked: found }
}

/** `text` with every card number masked in place (see findPanDigits); `text` itself when none. */
export function maskPansInText(text: string): string {
  if (text.length < MIN_DIGITS) return text
  const { positions, found } = findPanDigits(text.length, (i) =>
    i < text.length ? text.charCodeAt(i) : undefined,
  )
  if (found === 0) return text
  let out = ''
  for (let i = 0; i < text.length; i++) out += positions.has(i) ? '*' : text[i]
  return out
}
