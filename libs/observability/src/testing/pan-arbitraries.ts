/**
 * fast-check generators of card numbers in random surroundings, for the property
 * tests of every place that masks them (pan-masking.ts, the logger, the DLQ record
 * of @tep/kafka, the ingest's minimisation). Test support only: exported as
 * `@tep/observability/testing`, never imported by service code (fast-check is a
 * devDependency).
 *
 * `writtenPan`, `prefix` and `suffix` are the first generation (ASCII digits, single
 * spaces and dashes, never glued to a digit); the third security review showed
 * what they cannot find. The adversarial ones below (`hostilePan`, `gluedPrefix`,
 * `gluedSuffix`, `avroStringLength`) write card numbers the ways that got through.
 */
import fc from 'fast-check'

/** `body` followed by its Luhn check digit: a valid card number when 12-18 digits long. */
export function luhnComplete(body: readonly number[]): string {
  let sum = 0
  for (let i = 0; i < body.length; i++) {
    // The check digit will be rightmost, so the body's last digit is doubled.
    let d = body[body.length - 1 - i]!
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return `${body.join('')}${(10 - (sum % 10)) % 10}`
}

export const pan = fc
  .integer({ min: 13, max: 19 })
  .chain((length) =>
    fc
      .array(fc.integer({ min: 0, max: 9 }), { minLength: length - 1, maxLength: length - 1 })
      .map(luhnComplete),
  )

/** The card number written with single spaces or dashes between some of its digits. */
export const writtenPan = pan.chain((digits) =>
  fc
    .array(fc.constantFrom('', '', '', ' ', '-'), {
      minLength: digits.length - 1,
      maxLength: digits.length - 1,
    })
    .map((seps) => ({ digits, text: [...digits].map((d, i) => d + (seps[i] ?? '')).join('') })),
)

// Surroundings rich in what confuses a scanner: digits, spaces, dashes, slashes, letters.
export const noise = fc.string({ unit: fc.constantFrom(...'0123456789 -/.:x€é\n'.split('')), maxLength: 40 })
/**
 * Text before and after the card number. A digit glued to it would make it part of
 * a longer number (not a card number, by definition): a space goes between, so
 * "ref 7" before it becomes "ref 7 " — a card number next to another number.
 */
export const prefix = noise.map((p) => (/\d$/.test(p) ? `${p} ` : p))
export const suffix = noise.map((s) => (/^\d/.test(s) ? ` ${s}` : s))

/** Indexes in `written` of the digits masking must hide: all but the first six and last four. */
export function hiddenIndexes(written: string): number[] {
  const digitIndexes = [...written].flatMap((c, i) => (/\d/.test(c) ? [i] : []))
  return digitIndexes.slice(6, digitIndexes.length - 4)
}

/** Separators of every class the scanner must see through, one or several characters long. */
export const SEPARATOR_CLASSES = {
  whitespace: [' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u2009', '\u202f', '\u3000', '\u2007'],
  dash: ['-', '\u2010', '\u2011', '\u2013', '\u2014', '\u2212', '\ufe63', '\uff0d', ' - '],
  punctuation: ['.', '/', '_', ':', ',', ';', "'", '"', '(', ')', '\u00b7', '\u3002', '.\n', '*', '|', '+'],
  zeroWidth: ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u200e', '\u200d\u200d'],
} as const
const ALL_SEPARATORS = Object.values(SEPARATOR_CLASSES).flat()

/**
 * Digit sets: code point of '0' (every set is contiguous). ASCII, fullwidth,
 * Arabic-Indic, Devanagari, mathematical bold (above the BMP: two UTF-16 units).
 */
export const DIGIT_ZEROS = [0x30, 0xff10, 0x660, 0x966, 0x1d7ce] as const
const SUPERSCRIPTS = ['\u2070', '\u00b9', '\u00b2', '\u00b3', '\u2074', '\u2075', '\u2076', '\u2077', '\u2078', '\u2079']

/** One digit (0-9) written in the set starting at `zero` (-1: superscripts). */
function writeDigit(d: number, zero: number): string {
  return zero === -1 ? SUPERSCRIPTS[d]! : String.fromCodePoint(zero + d)
}

/**
 * A card number written adversarially: its digits in ASCII (mostly), one Unicode
 * digit set, or mixed per digit; separators of any class, any number of them,
 * between any of its digits. `digits` is the number in ASCII.
 */
export const hostilePan = pan.chain((digits) =>
  fc
    .record({
      zero: fc.oneof({ weight: 3, arbitrary: fc.constant(0x30) }, fc.constantFrom(...DIGIT_ZEROS, -1)),
      mixed: fc.boolean(),
      perDigitZero: fc.array(fc.constantFrom(...DIGIT_ZEROS), { minLength: digits.length, maxLength: digits.length }),
      seps: fc.array(
        fc.oneof({ weight: 3, arbitrary: fc.constant('') }, fc.constantFrom(...ALL_SEPARATORS)),
        { minLength: digits.length - 1, maxLength: digits.length - 1 },
      ),
    })
    .map(({ zero, mixed, perDigitZero, seps }) => ({
      digits,
      text: [...digits]
        .map((d, i) => writeDigit(Number(d), mixed ? perDigitZero[i]! : zero) + (seps[i] ?? ''))
        .join(''),
    })),
)

/** Surroundings glued to the card number: they may end (or start) with a letter or a digit. */
const hostileNoise = fc.string({
  unit: fc.oneof(
    fc.constantFrom(...'0123456789abcXYZ€é'.split('')),
    fc.constantFrom(...ALL_SEPARATORS),
    fc.constantFrom('\uff11', '\u0663', '\ud835\udfcf'),
  ),
  maxLength: 30,
})
export const gluedPrefix = hostileNoise
export const gluedSuffix = hostileNoise

/**
 * What a reader sees of `text` once separators are ignored: every Unicode digit as its
 * ASCII digit, '*' kept (a masked digit), every other character dropped except letters,
 * which stay (a letter ends a number). A check independent of the masker: a card
 * number `digits` is in clear exactly when this contains it.
 */
export function readableDigits(text: string): string {
  let out = ''
  for (const ch of text) {
    if (ch === '*') out += '*'
    else if (/\p{Nd}/u.test(ch)) out += digitValue(ch)
    else {
      const n = ch.normalize('NFKC')
      if (/^[0-9]$/.test(n)) out += n
      else if (/\p{L}/u.test(ch)) out += ch
    }
  }
  return out
}

function digitValue(ch: string): string {
  const cp = ch.codePointAt(0)!
  for (const zero of DIGIT_ZEROS) if (cp >= zero && cp < zero + 10) return String(cp - zero)
  if (cp >= 0x1d7ce && cp <= 0x1d7ff) return String((cp - 0x1d7ce) % 10)
  return ch.normalize('NFKC')
}

/** Avro's encoding of a string: its zig-zag varint byte length, then its UTF-8 bytes. */
export function avroString(text: string): Buffer {
  const body = Buffer.from(text, 'utf8')
  let n = body.length * 2
  const head: number[] = []
  while (n > 0x7f) {
    head.push((n & 0x7f) | 0x80)
    n = Math.floor(n / 128)
  }
  head.push(n)
  return Buffer.concat([Buffer.from(head), body])
}

/** String lengths 1..4,000 (bytes), so every length-prefix byte occurs, the digits 0x30-0x39 included. */
export const avroStringLength = fc.oneof(fc.integer({ min: 1, max: 4000 }), fc.integer({ min: 20, max: 40 }))
