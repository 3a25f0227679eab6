import { exampleConsent, type Consent } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { decideConsentRecord, isTerminal } from './consent-status.ts'

function consent(status: Consent['status'], version: number): Consent {
  return { ...exampleConsent(), status, version }
}

describe('decideConsentRecord (the terminal-state rule)', () => {
  it('takes the first record and newer (or equal: own echo) versions', () => {
    expect(decideConsentRecord(undefined, consent('ACTIVE', 1))).toEqual({ action: 'apply' })
    expect(decideConsentRecord(consent('ACTIVE', 1), consent('ACTIVE', 2))).toEqual({ action: 'apply' })
    expect(decideConsentRecord(consent('ACTIVE', 2), consent('ACTIVE', 2))).toEqual({ action: 'apply' })
  })

  it('keeps a newer state when an older version arrives', () => {
    expect(decideConsentRecord(consent('ACTIVE', 5), consent('ACTIVE', 4))).toEqual({ action: 'ignore' })
  })

  it('lets a terminal state win whatever its version', () => {
    expect(decideConsentRecord(consent('ACTIVE', 9), consent('ENDED', 3))).toEqual({ action: 'apply' })
  })

  it('never lets a later non-terminal write overwrite ENDED, REVOKED or EXPIRED: it is re-asserted', () => {
    for (const status of ['ENDED', 'REVOKED', 'EXPIRED'] as const) {
      const terminal = consent(status, 3)
      expect(decideConsentRecord(terminal, consent('ACTIVE', 4))).toEqual({ action: 'reassert', terminal })
      expect(decideConsentRecord(terminal, consent('EXPIRING', 10))).toEqual({ action: 'reassert', terminal })
    }
  })

  it('refuses a record that moves the consent to another customer, even a newer or terminal one', () => {
    const current = consent('ACTIVE', 3)
    for (const incoming of [
      { ...consent('ACTIVE', 4), customerId: 'attacker' },
      { ...consent('ENDED', 9), customerId: 'attacker' },
    ]) {
      expect(decideConsentRecord(current, incoming)).toEqual({ action: 'refuse', reason: 'CUSTOMER_CHANGED' })
    }
  })

  it('classifies statuses', () => {
    expect(['ENDED', 'REVOKED', 'EXPIRED'].every((s) => isTerminal(s as Consent['status']))).toBe(true)
    expect(['ACTIVE', 'EXPIRING', 'PENDING'].some((s) => isTerminal(s as Consent['status']))).toBe(false)
  })
})
