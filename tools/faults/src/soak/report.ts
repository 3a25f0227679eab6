import type { RowResult } from '../run-suite.ts'
import { SERVICES } from '../system.ts'
import type { MemoryTrend } from './memory-trend.ts'

/** One injected fault as the soak saw it. */
export interface FaultRecord {
  index: number
  /** `<kind>:<target>` of the catalogue. */
  fault: string
  /** Seconds from the soak's start: planned, and when it really began (later when the previous fault's output was still paused). */
  plannedAtSeconds: number
  atSeconds: number
  /** What was hurt, as the fault said it (broker id and role, outage). */
  description: string
  /** From its start to its heal. */
  durationSeconds: number
  /** Longest stretch from its start to the resume with work waiting and no output. */
  pauseSeconds: number
  /** From its heal to the first output after it (FlowMonitor samples, 1 s apart); null: none within the bound. */
  resumeSeconds: number | null
  /** Set when the injection itself failed. */
  error?: string
  passed: boolean
}

export interface SoakCheck {
  name: 'whole-run' | 'faults-resume' | 'no-exit-loop' | 'rss-growth' | 'consents-kept' | 'faults-injected'
  passed: boolean
  detail: string
}

export interface SoakBounds {
  /** A fault's output must resume within this many seconds of its heal (the issue's 60 s). */
  resumeSeconds: number
  /** No service's RSS may grow by more than this over the last window (the issue's 50 MB). */
  rssGrowthMb: number
  /** The last window, minutes (15). */
  windowMinutes: number
}

export const DEFAULT_BOUNDS: SoakBounds = { resumeSeconds: 60, rssGrowthMb: 50, windowMinutes: 15 }

/** The four services and the instances scale-out adds; not the simulators, which stand for outside systems. */
export const isService = (process: string): boolean => SERVICES.some((s) => process === s || process.startsWith(`${s}-`))

export function soakChecks(input: {
  faults: readonly FaultRecord[]
  memory: readonly MemoryTrend[]
  wholeRun: RowResult
  unexpectedExits: Readonly<Record<string, number>>
  endedConsents: readonly string[]
  bounds: SoakBounds
}): SoakCheck[] {
  const { faults, memory, wholeRun, bounds } = input
  const late = faults.filter((f) => !f.passed)
  const exits = Object.entries(input.unexpectedExits).filter(([, n]) => n > 0)
  const grown = memory.filter((m) => isService(m.process) && (m.rssGrowthLastWindowMb ?? 0) > bounds.rssGrowthMb)
  const services = memory.filter((m) => isService(m.process))
  return [
    { name: 'faults-injected', passed: faults.length > 0, detail: `${faults.length} fault(s) injected` },
    {
      name: 'whole-run',
      passed: wholeRun.passed,
      detail: `${wholeRun.events} raw records checked: ${wholeRun.lost} lost, ${wholeRun.duplicated} duplicated, ${wholeRun.dlqFromFaults} DLQ from faults${wholeRun.failures.length ? `; ${wholeRun.failures.join('; ')}` : ''}`,
    },
    {
      name: 'faults-resume',
      passed: late.length === 0,
      detail: late.length === 0 ? `every fault's output resumed within ${bounds.resumeSeconds} s of its heal` : late.map((f) => `#${f.index} ${f.fault}: ${f.error ?? (f.resumeSeconds === null ? 'no output' : `resumed after ${f.resumeSeconds} s`)}`).join('; '),
    },
    { name: 'no-exit-loop', passed: exits.length === 0, detail: exits.length === 0 ? 'no process exited on its own' : exits.map(([p, n]) => `${p} exited on its own ${n} time(s)`).join('; ') },
    {
      name: 'rss-growth',
      // n/a: a life too short to leave its warm-up (a service restarted shortly before the end) has no figure.
      passed: grown.length === 0 && services.length > 0,
      detail:
        services.length === 0
          ? 'no service was sampled'
          : `RSS growth over the last ${bounds.windowMinutes} min: ${services.map((m) => `${m.process} ${m.rssGrowthLastWindowMb ?? 'n/a'} MB`).join(', ')} (bound ${bounds.rssGrowthMb} MB)`,
    },
    { name: 'consents-kept', passed: input.endedConsents.length === 0, detail: input.endedConsents.length === 0 ? 'no bank consent ended by a fault' : `ended: ${input.endedConsents.join(', ')}` },
  ]
}

function table(head: string[], body: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)))
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`
  return [line(head), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...body.map(line)].join('\n')
}

const num = (n: number | null) => (n === null ? '—' : String(n))

export function renderFaultTable(faults: readonly FaultRecord[]): string {
  return table(
    ['#', 'at', 'fault', 'what', 'fault s', 'pause s', 'resume s', 'ok'],
    faults.map((f) => [String(f.index), formatAt(f.atSeconds), f.fault, f.error ? `FAILED: ${f.error}` : f.description, String(f.durationSeconds), String(f.pauseSeconds), num(f.resumeSeconds), f.passed ? 'yes' : 'NO']),
  )
}

export function renderMemoryTable(memory: readonly MemoryTrend[], windowMinutes: number): string {
  return table(
    ['process', 'samples', 'lives', 'RSS first MB', 'RSS last MB', 'RSS max MB', 'RSS MB/h', `RSS MB/h last ${windowMinutes} min`, `RSS growth last ${windowMinutes} min MB`, 'heap last MB', 'heap MB/h', `heap MB/h last ${windowMinutes} min`],
    memory.map((m) => [
      m.process,
      String(m.samples),
      String(m.lives),
      String(m.rssFirstMb),
      String(m.rssLastMb),
      String(m.rssMaxMb),
      num(m.rssSlopeMbPerHour),
      num(m.rssSlopeLastWindowMbPerHour),
      num(m.rssGrowthLastWindowMb),
      num(m.heapLastMb),
      num(m.heapSlopeMbPerHour),
      num(m.heapSlopeLastWindowMbPerHour),
    ]),
  )
}

export function renderChecks(checks: readonly SoakCheck[]): string {
  return checks.map((c) => `${c.passed ? 'pass' : 'FAIL'}  ${c.name.padEnd(16)}${c.detail}`).join('\n')
}

function formatAt(seconds: number): string {
  const s = Math.round(seconds)
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}
