import { describe, expect, it } from 'vitest'
import { auditVerdict } from './audit-verdict.ts'

const report = (vulnerabilities: Record<string, { severity: string }>) =>
  JSON.stringify({
    vulnerabilities,
    metadata: { vulnerabilities: { info: 0, low: 0, moderate: 1, high: 1, critical: 0, total: 2 } },
  })

describe('auditVerdict', () => {
  it('fails on a package at or above the level, not below', () => {
    const r = report({ a: { severity: 'moderate' }, b: { severity: 'high' } })
    expect(auditVerdict(r, 'high')).toMatchObject({ kind: 'vulnerable', packages: ['b (high)'] })
    expect(auditVerdict(r, 'critical')).toMatchObject({ kind: 'clean' })
  })

  it('says the audit could not run when the registry answers with an error (no report): never a failure', () => {
    // What npm prints when the registry (here a mirror) refuses the advisories endpoint.
    const refused = JSON.stringify({ message: '405 Method Not Allowed - POST https://registry.example/-/npm/v1/security/advisories/bulk', statusCode: 405, error: { summary: '' } })
    expect(auditVerdict(refused, 'high')).toEqual({ kind: 'unavailable', reason: expect.stringContaining('405') })
    expect(auditVerdict('', 'high')).toMatchObject({ kind: 'unavailable' })
    expect(auditVerdict('npm error network ENOTFOUND', 'high')).toMatchObject({ kind: 'unavailable' })
  })
})
