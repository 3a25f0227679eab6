/**
 * What the card-number scanner (pan-masking.ts) sees in a character: a digit (its
 * value 0-9), a separator that may sit between the digits of one number, or
 * anything else, which ends a number.
 *
 * Digits are every Unicode digit, not only ASCII: a character whose NFKC form is
 * one ASCII digit (fullwidth '１', superscript '¹', circled '①', mathematical '𝟏')
 * or any decimal digit (\p{Nd}: Arabic-Indic, Devanagari, ...). A person or a
 * system that writes a card number in those still wrote the card number.
 *
 * Separators are every character that can stand between digit groups without
 * making them two words: Unicode whitespace (NBSP, thin space, ideographic space,
 * newlines), punctuation (every dash, '.', '/', '_', ':', ',', quotes, brackets),
 * symbols ('+', '|', '*', '~'), format characters (zero-width space and joiner,
 * word joiner, soft hyphen, BOM, bidi marks) and combining marks. Letters and
 * control characters other than whitespace end a number.
 */

export const OTHER = -1
export const SEPARATOR = -2

/** A separator: the classes listed above. */
const SEPARATOR_PATTERN = /^[\p{White_Space}\p{P}\p{S}\p{Z}\p{Cf}\p{M}]$/u
const DECIMAL_DIGIT = /^\p{Nd}$/u

/** The class of one code point: 0-9 (a digit's value), SEPARATOR or OTHER. */
export function classify(cp: number): number {
  if (cp >= 0x30 && cp <= 0x39) return cp - 0x30
  const ch = String.fromCodePoint(cp)
  const nfkc = ch.normalize('NFKC')
  if (nfkc.length === 1) {
    const c = nfkc.charCodeAt(0)
    if (c >= 0x30 && c <= 0x39) return c - 0x30
  }
  if (DECIMAL_DIGIT.test(ch)) {
    // Unicode keeps every decimal digit set contiguous and in order 0-9 (a stability
    // guarantee), so the value is the position within the run of digits before it.
    let back = 0
    while (back < 60 && DECIMAL_DIGIT.test(String.fromCodePoint(cp - back - 1))) back++
    return back % 10
  }
  return SEPARATOR_PATTERN.test(ch) ? SEPARATOR : OTHER
}

/** classify() of a code point above the BMP, cached (few distinct ones ever occur). */
const ASTRAL = new Map<number, number>()
export function classOfAstral(cp: number): number {
  let k = ASTRAL.get(cp)
  if (k === undefined) {
    k = classify(cp)
    if (ASTRAL.size < 4096) ASTRAL.set(cp, k)
  }
  return k
}
