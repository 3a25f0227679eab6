/**
 * fast-check generators of card numbers in random surroundings, for the property
 * tests of every place that masks them (pan-masking.ts, the logger, the DLQ record
 * of @tep/kafka). Test support only: exported as `@tep/observability/testing`, never
 * imported by service code (fast-check is a devDependency).
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
