import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { maskIbans, maskIbansCounted } from './iban-masking.ts'

const IBAN = 'CZ6508000000192000145399'

/** A valid IBAN for `country` and `bban`: the check digits computed (ISO 13616). */
function iban(country: string, bban: string): string {
  let rest = 0
  for (const ch of `${bban}${country}00`) {
    const n = Number.parseInt(ch, 36)
    rest = (n > 9 ? rest * 100 + n : rest * 10 + n) % 97
  }
  return `${country}${String(98 - rest).padStart(2, '0')}${bban}`
}

describe('IBAN masking', () => {
  it('masks the IBAN the greedy pattern missed: followed by a space and an upper-case word', () => {
    expect(maskIbans(`payee ${IBAN} EUR`)).toBe('payee CZ******************5399 EUR')
    expect(maskIbansCounted(`payee ${IBAN} EUR`).masked).toBe(1)
  })

  it('masks lower-case, space- and dash-grouped IBANs in place, and one glued to a word after it', () => {
    expect(maskIbans('to cz65 0800 0000 1920 0014 5399.')).toBe('to cz** **** **** **** **** 5399.')
    expect(maskIbans('to CZ65-0800-0000-1920-0014-5399 EUR')).toBe('to CZ**-****-****-****-****-5399 EUR')
    expect(maskIbans(`(${IBAN}EUR)`)).toBe('(CZ******************5399EUR)')
    expect(maskIbans(`a ${IBAN} b GB82WEST12345698765432 c`)).toBe('a CZ******************5399 b GB****************5432 c')
  })

  it('leaves alone what fails the check, starts inside a word or is too short', () => {
    for (const text of ['CZ6508000000192000145398 EUR', `X${IBAN}`, 'TX20261125ABCDEFGH', 'CZ65 0800', 'tep_pan_masked_total'])
      expect(maskIbans(text)).toBe(text)
  })

  it('masks every valid IBAN, in any case and grouping, in any surroundings (property)', () => {
    const country = fc.constantFrom('CZ', 'DE', 'GB', 'FR', 'NO', 'MT', 'SK', 'AT')
    const bban = fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('')), minLength: 11, maxLength: 30 })
    const around = fc.string({ unit: fc.constantFrom(...' abcXYZ EUR.,:;-\n'.split('')), maxLength: 20 })
    fc.assert(
      fc.property(around, country, bban, fc.constantFrom('', ' ', '-'), fc.boolean(), around, (before, c, b, sep, lower, after) => {
        const value = iban(c, b)
        let written = value.replace(/(.{4})(?=.)/g, `$1${sep}`)
        if (lower) written = written.toLowerCase()
        // A word boundary before the IBAN (it must not start inside a word).
        const text = `${before} ${written} ${after}`
        const out = maskIbans(text)
        expect(out.length).toBe(text.length)
        const middle = value.slice(2, -4)
        expect(out.replace(/[ -]/g, '').toUpperCase(), `${text} -> ${out}`).not.toContain(middle)
      }),
      { numRuns: 2000 },
    )
  })
})
