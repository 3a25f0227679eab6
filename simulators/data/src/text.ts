/**
 * Text helpers shared by generation and matching. Card terminals print names in
 * upper-case ASCII without diacritics and squeeze punctuation, so matching a
 * printed acceptor name against our data compares normalised forms.
 */

const ALREADY_NORMAL = /^(?:[A-Z0-9]+(?: [A-Z0-9]+)*)?$/
const COMBINING_MARKS = /[\u0300-\u036f]/g
const SPECIAL_LETTERS: Record<string, string> = { ß: 'ss', Ł: 'L', ł: 'l', Ø: 'O', ø: 'o', Æ: 'AE', æ: 'ae', Đ: 'D', đ: 'd' }

/** Removes diacritics: "Plzeň" → "Plzen", "Łódź" → "Lodz", "Straße" → "Strasse". */
export function toAscii(text: string): string {
  return text.normalize('NFD').replace(COMBINING_MARKS, '').replace(/[ßŁłØøÆæĐđ]/g, (c) => SPECIAL_LETTERS[c] ?? c)
}

/**
 * The matching form of free text: ASCII, upper case, every run of characters other
 * than letters and digits turned into one space, trimmed. "Albert  0123 Praha-5" and
 * "ALBERT 0123 PRAHA 5" normalise alike.
 */
export function normaliseText(text: string): string {
  // Printed names are mostly normal already; skip the Unicode work for them.
  if (ALREADY_NORMAL.test(text)) return text
  return toAscii(text)
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, ' ')
    .trim()
}

/**
 * How terminals print a name: ASCII upper case, only the punctuation card schemes
 * allow, single spaces, cut to `max` characters.
 */
export function printed(text: string, max: number): string {
  return toAscii(text)
    .toUpperCase()
    .replace(/[^A-Z0-9 .&*/-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max)
    .trimEnd()
}

/** A URL path segment / host label: "Kavárna U Mlýna" → "kavarna-u-mlyna". */
export function slug(text: string): string {
  return toAscii(text)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Fixed-width base-62 encoding of a non-negative integer below 62^width. */
export function toBase62(value: number, width: number): string {
  let out = ''
  let v = value
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out
    v = Math.floor(v / 62)
  }
  return out
}

/** Inverse of `toBase62`; undefined when a character is not base 62. */
export function fromBase62(text: string): number | undefined {
  let v = 0
  for (let i = 0; i < text.length; i++) {
    const d = BASE62.indexOf(text.charAt(i))
    if (d < 0) return undefined
    v = v * 62 + d
  }
  return v
}

export function base62Char(n: number): string {
  return BASE62.charAt(n % 62)
}

export function padDigits(value: number, width: number): string {
  return String(value).padStart(width, '0')
}
