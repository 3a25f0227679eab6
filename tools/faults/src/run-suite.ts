import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { FlowMonitor } from './flow-monitor.ts'
import { flowingSamplesAfterKill, killResumeFailures } from './kill-resume.ts'
import { CLUSTER_SCENARIOS } from './cluster-scenarios.ts'
import { ClusterNetwork } from './network/cluster-network.ts'
import { networkUnavailableReason } from './network/requirements.ts'
import { PARTITION_SCENARIOS } from './partition-scenarios.ts'
import { resumedAfterHealSeconds as resumedAfterHeal } from './resume-after-heal.ts'
import { SCENARIOS, type Scenario } from './scenarios.ts'
import { mulberry32 } from './seeded-random.ts'
import { checkBank401First, checkOAuthState, scanLogsForSecrets, type SecurityResult } from './security.ts'
import { FaultSystem } from './system.ts'
import { checkWindow } from './topic-check.ts'

export interface RowResult {
  scenario: string
  /** Kafka nodes the row ran on (1, or 3 for the cluster rows). */
  brokers: number
  events: number
  faultsInjected: number
  lost: number
  duplicated: number
  dlqFromFaults: number
  maxPauseSeconds: number
  /** For each broker kill of the row: seconds from the kill until the output flowed again (null: it did not within the row). */
  resumedAfterKillSeconds: Array<number | null>
  /** The row's bound on resumedAfterKillSeconds (Scenario.maxResumeSeconds), when it has one. */
  maxResumeSeconds?: number
  /** For each broker kill of the row: seconds from the kill until the killed broker answered again. */
  brokerBackAfterKillSeconds: number[]
  /** For each network partition of the row: seconds from the heal until the output flowed again (null: it did not within the row). */
  resumedAfterHealSeconds?: Array<number | null>
  recoverySeconds: number | null
  passed: boolean
  /** Why a row failed, and what else is worth knowing. */
  failures: string[]
  notes: string[]
}

/** What a run writes to its results file (fault-results/latest.json, or --out). */
export interface SuiteResultFile {
  startedAt: string
  finishedAt: string
  machine: string
  options: { brokers: number; events: number; rate: number; seed: number; quick: boolean; scenarios: string[] }
  /** The services' logs, relative to the repository. */
  logs: string
  passed: boolean
  rows: RowResult[]
}

export interface SuiteOptions {
  repoRoot: string
  scenarios: string[]
  events: number
  ratePerSecond: number
  seed: number
  /** One fault of each kind (the integration suite's short version). */
  quick?: boolean
  outFile: string
  say: (line: string) => void
  /** Kafka nodes of the private stack. Default 1. */
  brokers?: number
}

export const SECURITY_ROWS = ['secrets-not-logged', 'oauth-state', 'bank-401-first'] as const
/** Every fault row, single-broker and cluster ones. */
export const ALL_SCENARIOS: Scenario[] = [...SCENARIOS, ...CLUSTER_SCENARIOS, ...PARTITION_SCENARIOS]
export const ALL_ROWS = [...ALL_SCENARIOS.map((s) => s.name), ...SECURITY_ROWS]

/** The rows a run with `brokers` nodes does by default: the single-broker suite, or the cluster rows. */
export function defaultRows(brokers: number): string[] {
  if (brokers === 1) return [...SCENARIOS.map((s) => s.name), ...SECURITY_ROWS]
  return [...CLUSTER_SCENARIOS, ...PARTITION_SCENARIOS].map((s) => s.name)
}

/** Why the chosen rows cannot run here (a partition row without root or iptables), or undefined. */
export function networkProblem(names: string[]): string | undefined {
  const needing = ALL_SCENARIOS.filter((s) => s.needsNetwork && names.includes(s.name)).map((s) => s.name)
  if (needing.length === 0) return undefined
  const reason = networkUnavailableReason({ partitions: true })
  return reason === undefined ? undefined : `${needing.join(', ')} need every party on its own network address, but ${reason}`
}

/**
 * The default rows this machine can run: without root or iptables the partition rows
 * are left out (`leftOut` says which and why) and the other cluster rows still run.
 */
export function runnableDefaultRows(brokers: number, problem: (names: string[]) => string | undefined = networkProblem): { rows: string[]; leftOut?: string } {
  const rows = defaultRows(brokers)
  const leftOut = problem(rows)
  if (leftOut === undefined) return { rows }
  const needing = new Set(ALL_SCENARIOS.filter((s) => s.needsNetwork).map((s) => s.name))
  return { rows: rows.filter((r) => !needing.has(r)), leftOut }
}

/** Why `name` cannot run on `brokers` nodes, or undefined when it can. */
export function topologyProblem(name: string, brokers: number): string | undefined {
  const topology = ALL_SCENARIOS.find((s) => s.name === name)?.topology ?? 'any'
  if (topology === 'cluster' && brokers < 3) return `${name} needs a replicated cluster (--brokers 3)`
  if (topology === 'single' && brokers !== 1) return `${name} restarts the only broker; it runs with --brokers 1`
  return undefined
}

async function runScenario(system: FaultSystem, monitor: FlowMonitor, scenario: Scenario, events: number, options: SuiteOptions, random: () => number): Promise<RowResult> {
  const { say } = options
  const prefix = `faults-${scenario.name}`
  const plannedMs = (events / options.ratePerSecond) * 1000
  say(`\n▶ ${scenario.name}: ${scenario.describe} (${events} raw events, about ${Math.round(plannedMs / 1000)} s of traffic)`)
  // Fresh consents before a row that would carry the clock past their 90 days (a long run, a long row):
  // time ending a consent is not a fault, and the check after the row would count it as one.
  if (system.bankDaysSinceConsent + plannedMs / 10_000 + 20 >= 90) {
    say(`  bank clock ${system.bankDaysSinceConsent} days past the sample consents: granting fresh ones before the row`)
    await system.grantSampleConsents()
  }
  const exitsBefore = new Map([...system.processes].map(([n, p]) => [n, p.unexpectedExits.length]))
  const from = Date.now()
  const extra = scenario.extra?.({ system, prefix })
  // Bank traffic: a new day of history every 10 s, synced by bank-sync as it comes.
  let bankTicks = 0
  const bankTimer = setInterval(() => {
    bankTicks++
    void system.advanceBankClock(1).catch(() => {})
  }, 10_000)
  const sentBefore = system.traffic.produced
  let injecting = true
  const trafficDone = system.traffic.run({ prefix, count: events, perSecond: options.ratePerSecond, trickleWhile: () => injecting, ...(extra ? { extra: extra.records } : {}) })
  let injected
  try {
    injected = await scenario.inject({ system, monitor, say, random, plannedMs, startedAt: from, quick: options.quick ?? false })
  } catch (err) {
    injected = { faultsInjected: 0, lastFaultEndedAt: Date.now(), failures: [`fault injection failed: ${(err as Error).message}`], notes: [] }
  } finally {
    injecting = false
  }
  await trafficDone
  clearInterval(bankTimer)
  const to = Date.now()
  say(`  traffic sent (${system.traffic.produced - sentBefore} records incl. extras); waiting for the pipeline to drain ...`)
  const drainedAt = await monitor.waitDrained()
  let summary = await checkWindow(system, from, to)
  if (summary.lost > 0) {
    // Something may still be in flight behind a slow restart: look once more before calling it lost.
    say(`  ${summary.lost} raw records without an outcome yet; checking again in 30 s`)
    await new Promise((r) => setTimeout(r, 30_000))
    summary = await checkWindow(system, from, to)
  }
  const failures = [...injected.failures]
  for (const [name, p] of system.processes) {
    const exits = p.unexpectedExits.length - (exitsBefore.get(name) ?? 0)
    if (exits > 0) failures.push(`${name} exited on its own ${exits} time(s) (see its log)`)
  }
  if (drainedAt === undefined) failures.push('the pipeline did not drain within 10 minutes')
  if (summary.lost > 0) failures.push(`lost: ${summary.samples.lost.slice(0, 5).join(', ')}`)
  if (summary.duplicated > 0) failures.push(`duplicated: ${summary.samples.duplicated.slice(0, 5).join(', ')}`)
  if (summary.dlqFromFaults > 0) failures.push(`dlq from faults: ${summary.samples.dlqFromFaults.slice(0, 5).map((d) => `${d.key} ${d.code}`).join(', ')}`)
  if (summary.unexpected > 0) failures.push(`outcomes without a raw record: ${summary.samples.unexpected.slice(0, 5).join(', ')}`)
  const maxPauseSeconds = monitor.maxPauseSeconds(from, drainedAt ?? Date.now())
  if (scenario.maxPauseSeconds !== undefined && maxPauseSeconds > scenario.maxPauseSeconds)
    failures.push(`output paused ${maxPauseSeconds} s, more than the ${scenario.maxPauseSeconds} s this row allows`)
  const resumedAfterKillSeconds = (injected.killedAt ?? []).map((at) => monitor.resumedAfterSeconds(at, drainedAt ?? Date.now(), flowingSamplesAfterKill(scenario)))
  const brokerBackAfterKillSeconds = (injected.killedAt ?? []).map((at, i) => Math.round(((injected.backAt?.[i] ?? at) - at) / 100) / 10)
  failures.push(...killResumeFailures(scenario, resumedAfterKillSeconds, brokerBackAfterKillSeconds))
  const resumedAfterHealSeconds = (injected.healedAt ?? []).map((at) => resumedAfterHeal(monitor.samples, at, drainedAt ?? Date.now(), (s) => monitor.drained(s)))
  if (scenario.maxResumeAfterHealSeconds !== undefined)
    for (const [i, s] of resumedAfterHealSeconds.entries())
      if (s === null || s > scenario.maxResumeAfterHealSeconds)
        failures.push(`output flowed again ${s === null ? 'never' : `${s} s`} after heal ${i + 1}, later than the ${scenario.maxResumeAfterHealSeconds} s this row allows`)
  if (scenario.name !== 'bank-api-chaos') {
    // Only the customer or time may end a consent; a fault that does is a failure of this row.
    const ended = await system.endedConsents()
    if (ended.length > 0) {
      failures.push(`bank consents ended by the faults (the customer would have to consent again): ${ended.join(', ')}`)
      await system.grantSampleConsents()
    }
  }
  const notes = [
    ...injected.notes,
    ...(injected.killedAt ?? []).map((at, i) => `output growth after kill ${i + 1} (s after the kill:+records): ${monitor.growthTimeline(at, at + 45_000)}`),
    `raw checked ${summary.raw.inWindow}; their DLQ records by code ${JSON.stringify(summary.dlq.byCode)}`,
    `bank clock advanced ${bankTicks} day(s) during the row`,
    ...(extra ? [`fuzz: ${extra.summary()}`] : []),
  ]
  const fuzzCount = extra?.count() ?? 0
  const row: RowResult = {
    scenario: scenario.name,
    brokers: system.brokerCount,
    events: summary.raw.inWindow,
    faultsInjected: injected.faultsInjected + fuzzCount,
    lost: summary.lost,
    duplicated: summary.duplicated,
    dlqFromFaults: summary.dlqFromFaults,
    maxPauseSeconds,
    resumedAfterKillSeconds,
    ...(scenario.maxResumeSeconds !== undefined && resumedAfterKillSeconds.length > 0 ? { maxResumeSeconds: scenario.maxResumeSeconds } : {}),
    brokerBackAfterKillSeconds,
    ...(resumedAfterHealSeconds.length > 0 ? { resumedAfterHealSeconds } : {}),
    recoverySeconds: drainedAt === undefined ? null : Math.max(0, Math.round((drainedAt - Math.max(injected.lastFaultEndedAt, to)) / 100) / 10),
    passed: failures.length === 0,
    failures,
    notes,
  }
  say(`  ${row.passed ? 'PASSED' : 'FAILED'}: ${row.events} checked, ${row.lost} lost, ${row.duplicated} duplicated, ${row.dlqFromFaults} dlq from faults${failures.length ? `; ${failures.join('; ')}` : ''}`)
  return row
}

/**
 * The rows check the raw records of their own time window; this one checks every
 * raw record of the run (also those written between rows, such as the bank
 * history backfills) against the whole output once more, which also catches an
 * outcome duplicated after its row was checked.
 */
export async function wholeRunRow(system: FaultSystem, monitor: FlowMonitor, say: (line: string) => void): Promise<RowResult> {
  say('\n▶ whole-run: every raw record of the run, checked once more at the end')
  const drainedAt = await monitor.waitDrained()
  const summary = await checkWindow(system, 0, Date.now())
  const failures: string[] = []
  if (drainedAt === undefined) failures.push('the pipeline did not drain within 10 minutes')
  if (summary.lost > 0) failures.push(`lost: ${summary.samples.lost.slice(0, 5).join(', ')}`)
  if (summary.duplicated > 0) failures.push(`duplicated: ${summary.samples.duplicated.slice(0, 5).join(', ')}`)
  if (summary.dlqFromFaults > 0) failures.push(`dlq from faults: ${summary.samples.dlqFromFaults.slice(0, 5).map((d) => `${d.key} ${d.code}`).join(', ')}`)
  if (summary.unexpected > 0) failures.push(`outcomes without a raw record: ${summary.samples.unexpected.slice(0, 5).join(', ')}`)
  const unexpectedExits = [...system.processes].reduce((n, [, p]) => n + p.unexpectedExits.length, 0)
  const kills = [...system.processes].reduce((n, [, p]) => n + p.kills, 0)
  say(`  ${failures.length === 0 ? 'PASSED' : 'FAILED'}: ${summary.raw.inWindow} checked, ${summary.lost} lost, ${summary.duplicated} duplicated, ${summary.dlqFromFaults} dlq from faults`)
  return {
    scenario: 'whole-run',
    brokers: system.brokerCount,
    events: summary.raw.inWindow,
    faultsInjected: kills,
    lost: summary.lost,
    duplicated: summary.duplicated,
    dlqFromFaults: summary.dlqFromFaults,
    maxPauseSeconds: 0,
    resumedAfterKillSeconds: [],
    brokerBackAfterKillSeconds: [],
    recoverySeconds: 0,
    passed: failures.length === 0,
    failures,
    notes: [`dlq by code ${JSON.stringify(summary.dlq.byCode)}`, `${unexpectedExits} unexpected process exits over the run (counted in their rows)`],
  }
}

function securityRow(name: string, brokers: number, result: SecurityResult): RowResult {
  return { scenario: name, brokers, events: 0, faultsInjected: result.checks, lost: 0, duplicated: 0, dlqFromFaults: 0, maxPauseSeconds: 0, resumedAfterKillSeconds: [], brokerBackAfterKillSeconds: [], recoverySeconds: 0, passed: result.passed, failures: result.failures, notes: result.notes }
}

export function renderTable(rows: RowResult[]): string {
  const head = ['scenario', 'brokers', 'events', 'faults', 'lost', 'dup', 'dlq from faults', 'max pause s', 'resumed s after kill', 'recovery s', 'passed']
  const figures = (list: Array<number | null>) => list.map((s) => (s === null ? 'never' : String(s))).join(', ')
  // A partition row's figure is from the heal, marked so: "heal 12.3".
  const resumed = (r: RowResult) =>
    r.resumedAfterHealSeconds?.length ? `heal ${figures(r.resumedAfterHealSeconds)}` : r.resumedAfterKillSeconds.length === 0 ? '—' : figures(r.resumedAfterKillSeconds)
  const body = rows.map((r) => [r.scenario, String(r.brokers), String(r.events), String(r.faultsInjected), String(r.lost), String(r.duplicated), String(r.dlqFromFaults), String(r.maxPauseSeconds), resumed(r), r.recoverySeconds === null ? '—' : String(r.recoverySeconds), r.passed ? 'yes' : 'NO'])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)))
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`
  return [line(head), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...body.map(line)].join('\n')
}

/** Runs the chosen rows on one private system and writes the JSON result. */
export async function runSuite(options: SuiteOptions): Promise<RowResult[]> {
  const { say } = options
  const runDir = path.join(options.repoRoot, '.local', 'faults', `run-${Date.now().toString(36)}`)
  const chosen = ALL_SCENARIOS.filter((s) => options.scenarios.includes(s.name))
  // On a cluster every Kafka node and the namespaced services get their own address when this machine
  // allows it (root, iproute2); the partition rows need it (and iptables), the other rows run either way.
  const brokers = options.brokers ?? 1
  const wantsNetwork = brokers > 1 && networkUnavailableReason({ partitions: chosen.some((s) => s.needsNetwork) }) === undefined
  if (brokers > 1 && !wantsNetwork) say(`network: every party on 127.0.0.1 (${networkUnavailableReason({ partitions: false }) ?? 'iptables missing'})`)
  const network = wantsNetwork
    ? ClusterNetwork.create([...Array.from({ length: brokers }, (_, i) => `kafka-${i + 1}`), 'transaction-ingest', 'refresher', 'invalidation-poller'], { partitions: chosen.some((s) => s.needsNetwork), say })
    : undefined
  const system = new FaultSystem({ repoRoot: options.repoRoot, runDir, say, brokers, ...(network === undefined ? {} : { network }) })
  const rows: RowResult[] = []
  const random = mulberry32(options.seed)
  const totalWeight = chosen.reduce((s, c) => s + c.weight, 0)
  const startedAt = new Date()
  let monitor: FlowMonitor | undefined
  try {
    say(`starting the system in ${path.relative(options.repoRoot, runDir)} ...`)
    await system.start()
    monitor = new FlowMonitor(system.kafka)
    await monitor.start()
    for (const scenario of chosen) {
      const events = Math.max(100, Math.round((options.events * scenario.weight) / totalWeight), options.quick ? 0 : Math.round((scenario.minTrafficSeconds ?? 0) * options.ratePerSecond))
      rows.push(await runScenario(system, monitor, scenario, events, options, random))
    }
    if (chosen.length > 0) rows.push(await wholeRunRow(system, monitor, say))
    if (options.scenarios.includes('oauth-state')) rows.push(securityRow('oauth-state', system.brokerCount, await checkOAuthState(system).catch((err: Error) => ({ passed: false, checks: 0, failures: [err.message], notes: [] }))))
    if (options.scenarios.includes('bank-401-first')) rows.push(securityRow('bank-401-first', system.brokerCount, await checkBank401First(system).catch((err: Error) => ({ passed: false, checks: 0, failures: [err.message], notes: [] }))))
    if (options.scenarios.includes('secrets-not-logged')) rows.push(securityRow('secrets-not-logged', system.brokerCount, await scanLogsForSecrets(system).catch((err: Error) => ({ passed: false, checks: 0, failures: [err.message], notes: [] }))))
  } finally {
    await monitor?.stop()
    say('stopping the system ...')
    await system.stop()
  }
  mkdirSync(path.dirname(options.outFile), { recursive: true })
  const file: SuiteResultFile = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machineLine(),
    options: { brokers: options.brokers ?? 1, events: options.events, rate: options.ratePerSecond, seed: options.seed, quick: options.quick ?? false, scenarios: options.scenarios },
    logs: path.relative(options.repoRoot, system.logDir),
    passed: rows.every((r) => r.passed),
    rows,
  }
  writeFileSync(options.outFile, `${JSON.stringify(file, null, 2)}\n`)
  return rows
}

export function machineLine(): string {
  return `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, load ${os.loadavg().map((l) => l.toFixed(1)).join('/')} at the end, Node ${process.version}`
}
