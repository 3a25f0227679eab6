/**
 * `npm run audit:deps [-- --level high]`: the dependency audit, offline-tolerant. Runs
 * `npm audit` (the lockfile against the registry's advisories); exits 1 when a package at or
 * above the level is vulnerable, 0 when clean, and 0 with a clear line when the registry could
 * not be asked (offline, or a mirror without the advisories endpoint). README, "Dependency audit".
 */
import { spawnSync } from 'node:child_process'
import { auditVerdict, SEVERITIES, type Severity } from './audit/audit-verdict.ts'

const i = process.argv.indexOf('--level')
const level = (i === -1 ? 'high' : process.argv[i + 1]) as Severity
if (!SEVERITIES.includes(level)) {
  process.stderr.write(`--level must be one of ${SEVERITIES.join(', ')}, got ${String(level)}\n`)
  process.exit(2)
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
// --audit=true: the project's .npmrc turns the install-time audit off; this asks explicitly.
const run = spawnSync(npm, ['audit', '--json', '--audit=true', '--omit=dev'], { encoding: 'utf8', timeout: 120_000 })
const verdict = run.error ? { kind: 'unavailable' as const, reason: run.error.message } : auditVerdict(run.stdout, level)
if (verdict.kind === 'unavailable') {
  process.stdout.write(`dependency audit NOT RUN: the registry could not be asked (${verdict.reason}); run npm run audit:deps where it answers\n`)
  process.exit(0)
}
const summary = SEVERITIES.map((s) => `${s} ${verdict.counts[s] ?? 0}`).join(', ')
if (verdict.kind === 'clean') {
  process.stdout.write(`dependency audit: nothing at or above ${level} (${summary})\n`)
  process.exit(0)
}
process.stdout.write(`dependency audit: ${verdict.packages.length} package(s) at or above ${level}: ${verdict.packages.join(', ')} (${summary}); see npm audit\n`)
process.exit(1)
