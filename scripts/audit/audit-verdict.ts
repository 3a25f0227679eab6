/**
 * What `npm audit --json` said, in three outcomes: it ran and found nothing at or above the
 * level, it ran and found some, or it could not ask (offline, a proxy or mirror without the
 * advisories endpoint: npm prints an error object instead of a report). The last is said,
 * never a failure: a build must not break because the registry did not answer.
 */
export type AuditVerdict =
  | { kind: 'clean'; counts: Record<string, number> }
  | { kind: 'vulnerable'; counts: Record<string, number>; packages: string[] }
  | { kind: 'unavailable'; reason: string }

export const SEVERITIES = ['info', 'low', 'moderate', 'high', 'critical'] as const
export type Severity = (typeof SEVERITIES)[number]

interface AuditReport {
  vulnerabilities?: Record<string, { severity?: string }>
  metadata?: { vulnerabilities?: Record<string, number> }
  message?: string
  error?: unknown
  statusCode?: number
}

export function auditVerdict(stdout: string, level: Severity): AuditVerdict {
  let report: AuditReport
  try {
    report = JSON.parse(stdout) as AuditReport
  } catch {
    return { kind: 'unavailable', reason: stdout.trim() === '' ? 'npm audit printed nothing' : 'npm audit did not print a report' }
  }
  if (report.metadata?.vulnerabilities === undefined || report.vulnerabilities === undefined) {
    const why = typeof report.message === 'string' ? report.message : report.statusCode !== undefined ? `HTTP ${report.statusCode}` : 'no report'
    return { kind: 'unavailable', reason: why }
  }
  const counts = report.metadata.vulnerabilities
  const at = SEVERITIES.indexOf(level)
  const packages = Object.entries(report.vulnerabilities)
    .filter(([, v]) => SEVERITIES.indexOf((v.severity ?? 'info') as Severity) >= at)
    .map(([name, v]) => `${name} (${v.severity})`)
  return packages.length > 0 ? { kind: 'vulnerable', counts, packages } : { kind: 'clean', counts }
}
