/**
 * Card numbers (PANs) must not be kept where the pipeline stores or prints what it
 * could not process, nor on its success path: a full card number sent by mistake
 * would otherwise sit in the DLQ (30 days), the enriched topic, every tool that
 * reads them, and the logs. One implementation serves them all: the logs, /readyz
 * and DLQ reasons (redaction.ts), DLQ keys, values and headers (@tep/kafka), the
 * ingest's free-text fields.
 *
 * What counts as a card number: 13 to 19 digits that pass the Luhn check, inside a
 * chain of digits joined by any separators (character-classes.ts: any Unicode
 * whitespace, punctuation, symbol, zero-width or format character, in any number;
 * any Unicode digit). Every 13-19 digit window of a chain is tried, wherever it
 * starts: a card number glued to other digits is still a card number. That is what
 * the third security review showed: in Avro the byte before a string is its
 * zig-zag length, an ASCII digit for lengths 25-28, and the earlier rule ("glued to
 * a digit = a longer number, not a card number") let such descriptions through.
 *
 * Masking keeps the first six and last four digits of each window (PCI DSS's
 * display rule) and replaces every other digit with '*', one '*' per code unit (text)
 * or byte (bytes), so lengths never change. The output is scanned again until it
 * holds no card number by this definition: the digits kept around two masked
 * numbers may join into a third.
 *
 * Luhn lets one random window in ten through, and long digit chains have many
 * windows: dates with times, long ids and amounts joined by punctuation are
 * sometimes masked too. Masking too much is the safe side everywhere this runs,
 * except where a lookup key must stay exact (the ingest's minimise-raw.ts decides that).
 */

import { classify, classOfAstral, OTHER } from './character-classes.ts'

/**
 * Classes of the 65,536 UTF-16 code units, filled on first sight (UNKNOWN until
 * then): the inner loop is one array read per character. Kept in this module: a
 * typed array read through another module's binding took twice as long.
 */
const UNKNOWN = 127
const UNIT_CLASSES = new Int8Array(0x10000).fill(UNKNOWN)
for (let c = 0; c < 0x80; c++) UNIT_CLASSES[c] = classify(c)

function classOfUnit(unit: number): number {
  let k = UNIT_CLASSES[unit]!
  if (k === UNKNOWN) {
    k = classify(unit)
    UNIT_CLASSES[unit] = k
  }
  return k
}

const STAR = 0x2a
const MIN_DIGITS = 13
const MAX_DIGITS = 19
/** Re-scans of a masked output; each masks at least one more digit, a handful always suffice. */
const MAX_PASSES = 8

const DOUBLED = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9]

/**
 * Collects the digits of the chain being read and, when it ends, masks the Luhn-valid
 * windows. Positions are whatever the caller reads (code units, bytes): each digit
 * covers [start, end).
 */
class ChainScanner {
  values = new Int8Array(64)
  starts = new Int32Array(64)
  ends = new Int32Array(64)
  n = 0
  evenKept = new Int32Array(65)
  oddKept = new Int32Array(65)
  hide = new Uint8Array(64)
  /** [start, end) pairs of the digits to mask. */
  ranges: number[] = []
  found = 0

  reset(): void {
    this.n = 0
    this.ranges.length = 0
    this.found = 0
  }

  digit(value: number, start: number, end: number): void {
    if (this.n === this.values.length) this.#grow()
    this.values[this.n] = value
    this.starts[this.n] = start
    this.ends[this.n] = end
    this.n++
  }

  /** The chain ended (a character that is neither digit nor separator, or the input's end). */
  end(): void {
    if (this.n >= MIN_DIGITS) this.#windows()
    this.n = 0
  }

  #windows(): void {
    const { n, values, evenKept, oddKept, hide } = this
    // Luhn: the rightmost digit is kept, every second one to its left doubled. Prefix
    // sums for both parities: `evenKept` keeps digits at even indexes and doubles the
    // odd ones, `oddKept` the other way round; a window ending at e uses the one whose
    // kept parity is that of e - 1. Each window's sum is then two reads.
    for (let k = 0; k < n; k++) {
      const d = values[k]!
      evenKept[k + 1] = evenKept[k]! + (k % 2 === 0 ? d : DOUBLED[d]!)
      oddKept[k + 1] = oddKept[k]! + (k % 2 === 1 ? d : DOUBLED[d]!)
      hide[k] = 0
    }
    let any = false
    for (let s = 0; s + MIN_DIGITS <= n; s++) {
      const last = Math.min(n, s + MAX_DIGITS)
      for (let e = s + MIN_DIGITS; e <= last; e++) {
        const sums = (e - 1) % 2 === 0 ? evenKept : oddKept
        if ((sums[e]! - sums[s]!) % 10 !== 0) continue
        this.found++
        any = true
        for (let k = s + 6; k < e - 4; k++) hide[k] = 1
      }
    }
    if (!any) return
    for (let k = 0; k < n; k++) if (hide[k] === 1) this.ranges.push(this.starts[k]!, this.ends[k]!)
  }

  #grow(): void {
    const size = this.values.length * 2
    const grow = <T extends Int8Array | Int32Array | Uint8Array>(a: T, b: T): T => (b.set(a), b)
    this.values = grow(this.values, new Int8Array(size))
    this.starts = grow(this.starts, new Int32Array(size))
    this.ends = grow(this.ends, new Int32Array(size))
    this.hide = new Uint8Array(size)
    this.evenKept = new Int32Array(size + 1)
    this.oddKept = new Int32Array(size + 1)
  }
}

const scanner = new ChainScanner()

/** Reads UTF-16 code units (surrogate pairs as one code point) into the scanner. */
function scanUnits(length: number, codeAt: (index: number) => number | undefined): void {
  scanner.reset()
  for (let i = 0; i < length; ) {
    const c = codeAt(i)
    if (c === undefined) break
    let k: number
    let width = 1
    if (c >= 0xd800 && c <= 0xdbff) {
      const low = codeAt(i + 1)
      if (low !== undefined && low >= 0xdc00 && low <= 0xdfff) {
        k = classOfAstral(((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000)
        width = 2
      } else k = OTHER
    } else k = classOfUnit(c)
    if (k >= 0) scanner.digit(k, i, i + width)
    else if (k === OTHER) scanner.end()
    i += width
  }
  scanner.end()
}

/** scanUnits over a string, with the class table read inline (the loop every log line goes through). */
function scanText(text: string): void {
  scanner.reset()
  const length = text.length
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i)
    let k = UNIT_CLASSES[c]!
    if (k === UNKNOWN || (c >= 0xd800 && c <= 0xdfff)) {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < length) {
        const low = text.charCodeAt(i + 1)
        if (low >= 0xdc00 && low <= 0xdfff) {
          k = classOfAstral(((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000)
          if (k >= 0) scanner.digit(k, i, i + 2)
          else if (k === OTHER) scanner.end()
          i++
          continue
        }
      }
      k = c >= 0xd800 && c <= 0xdfff ? OTHER : classOfUnit(c)
    }
    if (k >= 0) scanner.digit(k, i, i + 1)
    else if (k === OTHER) scanner.end()
  }
  scanner.end()
}

/** Length of the UTF-8 sequence at `i` and its code point; -1 for a byte that starts none. */
function utf8At(bytes: Uint8Array, i: number): [number, number] {
  const b = bytes[i]!
  const cont = (j: number) => j < bytes.length && (bytes[j]! & 0xc0) === 0x80
  if (b >= 0xc2 && b <= 0xdf && cont(i + 1)) return [2, ((b & 0x1f) << 6) | (bytes[i + 1]! & 0x3f)]
  if (b >= 0xe0 && b <= 0xef && cont(i + 1) && cont(i + 2))
    return [3, ((b & 0x0f) << 12) | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f)]
  if (b >= 0xf0 && b <= 0xf4 && cont(i + 1) && cont(i + 2) && cont(i + 3))
    return [
      4,
      ((b & 0x07) << 18) | ((bytes[i + 1]! & 0x3f) << 12) | ((bytes[i + 2]! & 0x3f) << 6) | (bytes[i + 3]! & 0x3f),
    ]
  return [1, -1]
}

/** Reads bytes as UTF-8 (a byte that is no valid sequence ends a chain) into the scanner. */
function scanBytes(bytes: Uint8Array): void {
  scanner.reset()
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!
    let k: number
    let width = 1
    if (b < 0x80) k = UNIT_CLASSES[b]!
    else {
      const [w, cp] = utf8At(bytes, i)
      width = w
      k = cp < 0 || (cp >= 0xd800 && cp <= 0xdfff) ? OTHER : cp > 0xffff ? classOfAstral(cp) : classOfUnit(cp)
    }
    if (k >= 0) scanner.digit(k, i, i + width)
    else if (k === OTHER) scanner.end()
    i += width
  }
  scanner.end()
}

/** Too few digits for a card number, and nothing but ASCII: the common case, decided in one pass. */
function plainTextWithoutPan(text: string): boolean {
  let digits = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0x80) return false
    if (c >= 0x30 && c <= 0x39 && ++digits >= MIN_DIGITS) return false
  }
  return true
}

function plainBytesWithoutPan(bytes: Uint8Array): boolean {
  let digits = 0
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!
    if (c >= 0x80) return false
    if (c >= 0x30 && c <= 0x39 && ++digits >= MIN_DIGITS) return false
  }
  return true
}

/**
 * The Luhn check of one string of ASCII digits as a whole, for callers that judge a
 * whole value (a 15-digit merchant id that may be a card number) rather than scan text.
 */
export function passesLuhn(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 0x30
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2
    sum += d
  }
  return sum % 10 === 0
}

/**
 * Positions (indexes for `codeAt`, UTF-16 code units) of the digits to mask, and how
 * many card-number windows they belong to. One pass, no re-scan (maskPansInText re-scans).
 */
export function findPanDigits(length: number, codeAt: (index: number) => number | undefined): { positions: Set<number>; found: number } {
  scanUnits(length, codeAt)
  const positions = new Set<number>()
  const { ranges } = scanner
  for (let r = 0; r < ranges.length; r += 2) for (let p = ranges[r]!; p < ranges[r + 1]!; p++) positions.add(p)
  return { positions, found: scanner.found }
}

/**
 * A copy of `bytes` (read as UTF-8) with every card number masked, each byte of a
 * hidden digit turned into '*' (same length: a Confluent frame keeps its header, and
 * an undecodable value stays as long as it was), and how many were masked (first
 * pass); `bytes` itself when none was found.
 */
export function maskPans(bytes: Buffer): { bytes: Buffer; masked: number } {
  if (plainBytesWithoutPan(bytes)) return { bytes, masked: 0 }
  scanBytes(bytes)
  if (scanner.found === 0) return { bytes, masked: 0 }
  const masked = scanner.found
  const out = Buffer.from(bytes)
  for (let pass = 0; pass < MAX_PASSES && scanner.found > 0; pass++) {
    const { ranges } = scanner
    for (let r = 0; r < ranges.length; r += 2) out.fill(STAR, ranges[r]!, ranges[r + 1]!)
    scanBytes(out)
  }
  return { bytes: out, masked }
}

/** `text` with every card number masked in place, and how many were masked (first pass). */
export function maskPansCounted(text: string): { text: string; masked: number } {
  if (text.length < MIN_DIGITS || plainTextWithoutPan(text)) return { text, masked: 0 }
  scanText(text)
  const masked = scanner.found
  let out = text
  for (let pass = 0; pass < MAX_PASSES && scanner.found > 0; pass++) {
    const { ranges } = scanner
    let next = ''
    let from = 0
    for (let r = 0; r < ranges.length; r += 2) {
      next += out.slice(from, ranges[r]) + '*'.repeat(ranges[r + 1]! - ranges[r]!)
      from = ranges[r + 1]!
    }
    out = next + out.slice(from)
    scanText(out)
  }
  return { text: out, masked }
}

/** `text` with every card number masked in place (see maskPansCounted); `text` itself when none. */
export function maskPansInText(text: string): string {
  return maskPansCounted(text).text
}
