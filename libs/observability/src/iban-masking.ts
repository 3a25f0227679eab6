/**
 * IBANs in text (logs, /readyz, DLQ reasons, API reject reasons): masked to their
 * country and last four characters, in place (separators and length kept).
 *
 * A candidate starts at a word boundary with two letters and two digits, in any
 * case, and continues with letters and digits, grouped by single spaces or dashes
 * ("CZ65 0800 0000 1920 0014 5399", "cz65-0800-..."). Every window of 15 to 34
 * characters (the shortest and longest IBANs) is tried with the ISO 13616 mod-97
 * check, shortest first, and the first that passes is masked. The earlier pattern
 * was greedy and upper-case only: in `payee CZ6508000000192000145399 EUR` it took
 * ` EUR` into the candidate, the check failed and nothing was masked.
 *
 * No country list: a wrong or outdated one would let an IBAN through, and a
 * false positive (one window in 97 of a word shaped like an IBAN) only masks a
 * token-like word, the safe side.
 */

/** Where a candidate starts: two letters and two digits, not inside a word. */
const START = /(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2}/g
const MIN_CHARS = 15
const MAX_CHARS = 34

function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
}
function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}
function isAlnum(c: number): boolean {
  return isLetter(c) || isDigit(c)
}
/** 0-35: digits as themselves, letters (either case) as 10-35. */
function valueOf(c: number): number {
  if (isDigit(c)) return c - 0x30
  return (c | 0x20) - 0x61 + 10
}

/** ISO 13616: the first four characters moved to the end, letters as 10..35, mod 97 = 1. */
function passesMod97(text: string, at: readonly number[], count: number): boolean {
  let rest = 0
  for (let k = 0; k < count; k++) {
    const n = valueOf(text.charCodeAt(at[(k + 4) % count]!))
    rest = (n > 9 ? rest * 100 + n : rest * 10 + n) % 97
  }
  return rest === 1
}

/** `text` with every IBAN masked in place (country and last four kept), and how many. */
export function maskIbansCounted(text: string): { text: string; masked: number } {
  if (text.length < MIN_CHARS) return { text, masked: 0 }
  let out: string[] | undefined
  let masked = 0
  const at: number[] = []
  START.lastIndex = 0
  for (let found = START.exec(text); found !== null; found = START.exec(text)) {
    const i = found.index
    // The candidate's characters: alphanumerics joined by single spaces or dashes.
    at.length = 0
    for (let j = i; j < text.length && at.length < MAX_CHARS; ) {
      const d = text.charCodeAt(j)
      if (isAlnum(d)) {
        at.push(j)
        j++
      } else if ((d === 0x20 || d === 0x2d) && at.length >= 4 && j + 1 < text.length && isAlnum(text.charCodeAt(j + 1))) j++
      else break
    }
    for (let count = MIN_CHARS; count <= at.length; count++) {
      if (!passesMod97(text, at, count)) continue
      // UTF-16 units, as `at` indexes them (only ASCII is replaced, so pairs survive).
      out ??= text.split('')
      masked++
      for (let k = 2; k < count - 4; k++) out[at[k]!] = '*'
      START.lastIndex = at[count - 1]! + 1
      break
    }
  }
  return out === undefined ? { text, masked: 0 } : { text: out.join(''), masked }
}

/** `text` with every IBAN masked in place; `text` itself when none. */
export function maskIbans(text: string): string {
  return maskIbansCounted(text).text
}
