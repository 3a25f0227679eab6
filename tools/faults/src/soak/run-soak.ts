import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { FlowMonitor } from '../flow-monitor.ts'
import { ClusterNetwork } from '../network/cluster-network.ts'
import { networkUnavailableReason } from '../network/requirements.ts'
import { resumedAfterHealSeconds } from '../resume-after-heal.ts'
import { machineLine, wholeRunRow, type RowResult } from '../run-suite.ts'
import type { InjectContext } from '../inject-context.ts'
import { mulberry32 } from '../seeded-random.ts'
import type { SingleFault } from '../single-fault.ts'
import { FaultSystem } from '../system.ts'
import { soakCatalogue, targetOf, type Catalogue } from './catalogue.ts'
import { formatDuration } from './duration.ts'
import { memoryTrends, type MemoryTrend } from './memory-trend.ts'
import { DEFAULT_BOUNDS, renderChecks, renderFaultTable, renderMemoryTable, soakChecks, type FaultRecord, type SoakBounds, type SoakCheck } from './report.ts'
import { MemorySampler, type MemorySample } from './sampler.ts'
import { planFaults, startTime, type PlannedFault } from './scheduler.ts'

export interface SoakOptions {
  repoRoot: string
  brokers: number
  durationMs: number
  /** Gap between two planned fault starts. */
  intervalMs: readonly [number, number]
  ratePerSecond: number
  seed: number
  /** How often every process's RSS and heap are read. Default 60 s. */
  sampleEveryMs?: number
  /** Faults beyond the core catalogue (partitions, the lost broker). */
  extraFaults?: readonly SingleFault[]
  bounds?: SoakBounds
  outFile: string
  say: (line: string) => void
}

/** What a soak writes to its results file (fault-results/soak-latest.json, or --out). */
export interface SoakResultFile {
  startedAt: string
  finishedAt: string
  machine: string
  loadAverage: { start: string; end: string }
  options: { brokers: number; soak: string; durationMs: number; intervalMs: readonly [number, number]; rate: number; seed: number; sampleEveryMs: number; bounds: SoakBounds }
  logs: string
  passed: boolean
  soak: {
    catalogue: string[]
    skipped: Catalogue['skipped']
    plan: PlannedFault[]
    faults: FaultRecord[]
    memory: MemoryTrend[]
    checks: SoakCheck[]
    unexpectedExits: Record<string, number>
    traffic: { produced: number; sendFailures: number }
    samples: MemorySample[]
  }
  /** The whole-run check, as the suite's last row. */
  rows: RowResult[]
}

export interface SoakResult {
  passed: boolean
  plan: PlannedFault[]
  faults: FaultRecord[]
  memory: MemoryTrend[]
  checks: SoakCheck[]
  tables: string
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)))
const load = () => os.loadavg().map((l) => l.toFixed(1)).join('/')
/** Bank history: one day a minute keeps an hour's soak inside the consents' 90 days; fresh consents every 60 days. */
const BANK_DAY_MS = 60_000
const BANK_DAYS_PER_CONSENT = 60

/**
 * `npm run faults -- --soak <duration>`: traffic at a steady rate for the
 * duration, one fault of the catalogue every 1-3 minutes (seeded plan), every
 * process's memory sampled each minute, each fault's pause and resume time
 * measured, and the whole run checked by the independent reader at the end.
 */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const { say } = options
  const bounds = options.bounds ?? DEFAULT_BOUNDS
  const runDir = path.join(options.repoRoot, '.local', 'faults', `soak-${Date.now().toString(36)}`)
  // On a cluster every Kafka node and the namespaced services get their own address when this machine allows it
  // (root, iproute2, iptables), as in the suite: the partitions need it; without it they are left out of the draw.
  const networkProblem = options.brokers > 1 ? networkUnavailableReason({ partitions: true }) : 'one broker'
  const catalogue = soakCatalogue(options.brokers, { ...(options.extraFaults ? { extra: options.extraFaults } : {}), ...(networkProblem === undefined ? {} : { networkProblem }) })
  const partitionsDrawn = options.brokers > 1 && networkProblem === undefined
  const network = partitionsDrawn ? ClusterNetwork.create([...Array.from({ length: options.brokers }, (_, i) => `kafka-${i + 1}`), 'transaction-ingest', 'refresher', 'invalidation-poller'], { partitions: true, say }) : undefined
  const system = new FaultSystem({ repoRoot: options.repoRoot, runDir, say, brokers: options.brokers, ...(network === undefined ? {} : { network }) })
  const byName = new Map(catalogue.faults.map((f) => [f.name, f]))
  const plan = planFaults({ seed: options.seed, durationMs: options.durationMs, intervalMs: options.intervalMs, faults: catalogue.faults.map((f) => f.name) })
  say(`catalogue (${catalogue.faults.length}): ${catalogue.faults.map((f) => f.name).join(', ')}`)
  if (catalogue.skipped.length > 0) say(`not on this topology: ${catalogue.skipped.map((s) => `${s.name} (${s.why})`).join(', ')}`)
  say(`plan (seed ${options.seed}): ${plan.map((p) => `#${p.index} ${formatDuration(p.offsetMs)} ${p.fault}`).join('; ') || 'no fault fits'}`)
  const startedAt = new Date()
  const loadAtStart = load()
  let monitor: FlowMonitor | undefined
  let sampler: MemorySampler | undefined
  const faults: FaultRecord[] = []
  let wholeRun
  let endedConsents: string[] | undefined
  try {
    say(`starting the system in ${path.relative(options.repoRoot, runDir)} ...`)
    await system.start()
    monitor = new FlowMonitor(system.kafka)
    await monitor.start()
    sampler = new MemorySampler(system, options.sampleEveryMs ?? 60_000)
    sampler.start()
    const soakStart = Date.now()
    const soakEnd = soakStart + options.durationMs
    say(`soak started: ${formatDuration(options.durationMs)} at ${options.ratePerSecond} raw events/s, load ${load()}`)
    let stopTraffic = false
    const trafficDone = system.traffic.run({ prefix: 'soak', count: Number.MAX_SAFE_INTEGER, perSecond: options.ratePerSecond, stopWhen: () => stopTraffic })
    // One bank day after the other (a refresh of the consents may outlast a tick).
    let bankDay: Promise<void> = Promise.resolve()
    const bankTimer = setInterval(() => {
      bankDay = bankDay.then(() => system.advanceBankDay(BANK_DAYS_PER_CONSENT)).catch((err: unknown) => say(`  bank clock not moved: ${(err as Error).message}`))
    }, BANK_DAY_MS)
    const progress = setInterval(() => say(progressLine(system, monitor!, sampler!, soakStart)), 60_000)

    let settledAt: number | undefined
    for (const planned of plan) {
      const at = startTime(soakStart, planned, settledAt)
      if (at > soakEnd - 30_000) {
        say(`  #${planned.index} ${planned.fault} not started: the previous faults ran late and the soak ends soon`)
        break
      }
      await sleep(at - Date.now())
      const fault = byName.get(planned.fault)!
      const ctx: InjectContext = { system, monitor, say, random: mulberry32(options.seed + planned.index), plannedMs: 0, startedAt: Date.now(), quick: false }
      say(`\n▶ #${planned.index} at ${formatDuration(Date.now() - soakStart)}: ${planned.fault} (kind ${planned.kind}${targetOf(planned.fault) ? `, target ${targetOf(planned.fault)}` : ''}; draws ${planned.draws.map((d) => d.toFixed(3)).join('/')}), load ${load()}`)
      const began = Date.now()
      let record: FaultRecord
      try {
        const outcome = await fault.inject(ctx)
        const resumeSeconds = await waitResumed(monitor, outcome.healedAt, bounds.resumeSeconds * 1000)
        const resumedAt = resumeSeconds === null ? undefined : outcome.healedAt + resumeSeconds * 1000
        record = {
          index: planned.index,
          fault: planned.fault,
          plannedAtSeconds: Math.round(planned.offsetMs / 1000),
          atSeconds: Math.round((outcome.startedAt - soakStart) / 1000),
          description: outcome.description,
          durationSeconds: Math.round((outcome.healedAt - outcome.startedAt) / 100) / 10,
          pauseSeconds: monitor.maxPauseSeconds(outcome.startedAt, resumedAt ?? Date.now()),
          resumeSeconds,
          passed: resumeSeconds !== null && resumeSeconds <= bounds.resumeSeconds,
        }
        settledAt = Date.now()
      } catch (err) {
        record = { index: planned.index, fault: planned.fault, plannedAtSeconds: Math.round(planned.offsetMs / 1000), atSeconds: Math.round((began - soakStart) / 1000), description: '', durationSeconds: 0, pauseSeconds: 0, resumeSeconds: null, error: (err as Error).message, passed: false }
        settledAt = Date.now()
      }
      faults.push(record)
      say(`  #${record.index} ${record.fault}: ${record.error ? `FAILED: ${record.error}` : `${record.description}; fault ${record.durationSeconds} s, output paused ${record.pauseSeconds} s, resumed ${record.resumeSeconds ?? '—'} s after the heal`}`)
    }
    await sleep(soakEnd - Date.now())
    stopTraffic = true
    await trafficDone
    clearInterval(bankTimer)
    clearInterval(progress)
    await sampler.sample()
    await sampler.stop()
    say(`\ntraffic stopped after ${formatDuration(Date.now() - soakStart)} (${system.traffic.produced} raw records, ${system.traffic.sendFailures} failed sends retried); load ${load()}`)
    wholeRun = await wholeRunRow(system, monitor, say)
    endedConsents = await system.endedConsents()
  } finally {
    await sampler?.stop()
    await monitor?.stop()
    say('stopping the system ...')
    await system.stop()
  }
  const memory = memoryTrends(sampler?.samples ?? [], bounds.windowMinutes * 60_000)
  const unexpectedExits = Object.fromEntries([...system.processes].map(([n, p]) => [n, p.unexpectedExits.length]))
  const checks = soakChecks({ faults, memory, wholeRun, unexpectedExits, endedConsents: endedConsents ?? [], bounds })
  const passed = checks.every((c) => c.passed)
  const tables = [
    `chaos soak: ${options.brokers === 1 ? 'one broker' : `${options.brokers} brokers`}, ${formatDuration(options.durationMs)}, ${options.ratePerSecond} raw events/s, seed ${options.seed}; load ${loadAtStart} at the start, ${load()} at the end`,
    renderFaultTable(faults),
    renderMemoryTable(memory, bounds.windowMinutes),
    renderChecks(checks),
  ].join('\n\n')
  mkdirSync(path.dirname(options.outFile), { recursive: true })
  const result: SoakResultFile = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machineLine(),
    loadAverage: { start: loadAtStart, end: load() },
    options: { brokers: options.brokers, soak: formatDuration(options.durationMs), durationMs: options.durationMs, intervalMs: options.intervalMs, rate: options.ratePerSecond, seed: options.seed, sampleEveryMs: options.sampleEveryMs ?? 60_000, bounds },
    logs: path.relative(options.repoRoot, system.logDir),
    passed,
    soak: {
      catalogue: catalogue.faults.map((f) => f.name),
      skipped: catalogue.skipped,
      plan,
      faults,
      memory,
      checks,
      unexpectedExits,
      traffic: { produced: system.traffic?.produced ?? 0, sendFailures: system.traffic?.sendFailures ?? 0 },
      samples: sampler?.samples ?? [],
    },
    rows: [wholeRun],
  }
  writeFileSync(options.outFile, `${JSON.stringify(result, null, 2)}\n`)
  return { passed, plan, faults, memory, checks, tables }
}

/**
 * Waits until the output moved after `healedAt` (resume-after-heal.ts over the
 * FlowMonitor's samples, the partition rows' measure), or `boundMs` passed:
 * returns the seconds from the heal, or null. The next fault waits for this, so
 * each fault's resume time is its own.
 */
async function waitResumed(monitor: FlowMonitor, healedAt: number, boundMs: number): Promise<number | null> {
  for (;;) {
    const seconds = resumedAfterHealSeconds(monitor.samples, healedAt, Date.now(), (s) => monitor.drained(s))
    if (seconds !== null) return seconds
    if (Date.now() > healedAt + boundMs + 2_000) return null
    await sleep(1_000)
  }
}

function progressLine(system: FaultSystem, monitor: FlowMonitor, sampler: MemorySampler, soakStart: number): string {
  const last = monitor.samples[monitor.samples.length - 1]
  const latest = new Map<string, number>()
  for (const s of sampler.samples) latest.set(s.process, s.rssBytes)
  const rss = [...latest].map(([p, b]) => `${p} ${Math.round(b / 2 ** 20)}`).join(', ')
  return `  [${formatDuration(Date.now() - soakStart)}] sent ${system.traffic.produced}, lag ${last?.lag ?? '?'}, output ${last?.output ?? '?'}; RSS MB: ${rss}; load ${load()}`
}
