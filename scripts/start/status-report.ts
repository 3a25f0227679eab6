import { TOPICS } from '@tep/kafka'
import type { LiveView } from './live-view.ts'
import type { PipelineExporter } from './pipeline-exporter.ts'
import type { SupervisedService } from './supervisor.ts'
import { describeContractDrift } from './contract-drift-poll.ts'

export interface ServiceStatus {
  state: 'running' | 'restarting' | 'stopped'
  /** ready, not ready (with the failing checks: the reason of a pause), not answering, or no health endpoint (simulators). */
  health: string
  ready: boolean | null
  restarts: number
  pid: number | null
  lastExit: string | null
}

/** One observation of the whole pipeline: what the live view draws and what --no-ui prints as a JSON line. */
export interface StatusSnapshot {
  time: string
  uptimeSeconds: number
  sampleTrafficProduced: number
  counts: Record<string, number>
  outcomes: Record<string, number>
  ratesPerSecond: Record<string, number>
  consumerLag: Record<string, number>
  endToEndLatencySeconds: { p50: number; p99: number; samples: number } | null
  services: Record<string, ServiceStatus>
  /** Not-ready checks of each service, e.g. the reason of a pause (`consumer: transactions.raw.v1/0 ENRICHMENT_TIMEOUT ...`). */
  pauses: Record<string, string[]>
  /** Tolerated differences between the real APIs and what the clients expect (`api operation field kind` -> count). */
  contractDrift: Record<string, number>
}

export interface Watched {
  service: SupervisedService
  /** Base URL of the service's health/metrics server; none for the simulators. */
  healthUrl?: string
}

/** Polls /readyz of every watched service and keeps the last answer. */
export class ReadinessPoller {
  readonly health = new Map<string, { ready: boolean | null; text: string; waiting: string[] }>()

  async poll(watched: Watched[]): Promise<void> {
    await Promise.all(
      watched.map(async ({ service, healthUrl }) => {
        if (healthUrl === undefined) {
          this.health.set(service.name, { ready: null, text: service.state === 'running' ? 'running' : service.state, waiting: [] })
          return
        }
        try {
          const res = await fetch(`${healthUrl}/readyz`, { signal: AbortSignal.timeout(1_500) })
          const body = (await res.json()) as { ready: boolean; checks?: Record<string, { ready: boolean; detail?: string }> }
          const waiting = Object.entries(body.checks ?? {})
            .filter(([, c]) => !c.ready)
            .map(([n, c]) => `${n}: ${c.detail ?? 'not ready'}`)
          this.health.set(service.name, { ready: body.ready, text: body.ready ? 'ready' : `not ready (${waiting.join('; ')})`, waiting })
        } catch {
          this.health.set(service.name, { ready: false, text: service.state === 'restarting' ? 'restarting' : 'not answering', waiting: [] })
        }
      }),
    )
  }
}

export function takeSnapshot(input: { startedAt: number; produced: number; view: LiveView; exporter?: PipelineExporter; watched: Watched[]; readiness: ReadinessPoller; contractDrift?: ReadonlyMap<string, number> }): StatusSnapshot {
  const { view, watched, readiness } = input
  const latency = view.latency()
  const round = (n: number) => Math.round(n * 1000) / 1000
  const services: Record<string, ServiceStatus> = {}
  const pauses: Record<string, string[]> = {}
  for (const { service } of watched) {
    const h = readiness.health.get(service.name)
    services[service.name] = { state: service.state, health: h?.text ?? '…', ready: h?.ready ?? null, restarts: service.restarts, pid: service.pid ?? null, lastExit: service.lastExit ?? null }
    if (h && h.waiting.length > 0) pauses[service.name] = h.waiting
  }
  return {
    time: new Date().toISOString(),
    uptimeSeconds: Math.round((Date.now() - input.startedAt) / 1000),
    sampleTrafficProduced: input.produced,
    counts: Object.fromEntries(view.counts),
    outcomes: Object.fromEntries(view.statuses),
    ratesPerSecond: Object.fromEntries([...view.rates()].map(([t, r]) => [t, round(r)])),
    consumerLag: Object.fromEntries(input.exporter?.lagByGroup ?? []),
    endToEndLatencySeconds: latency ? { p50: round(latency.p50), p99: round(latency.p99), samples: latency.count } : null,
    services,
    pauses,
    contractDrift: Object.fromEntries(input.contractDrift ?? []),
  }
}

/** The full-screen view of a terminal. */
export function renderScreen(s: StatusSnapshot, header: string, recent: string[]): string {
  const c = (t: string) => s.counts[t] ?? 0
  const r = (t: string) => `${(s.ratesPerSecond[t] ?? 0).toFixed(1).padStart(6)}/s`
  const o = (k: string) => s.outcomes[k] ?? 0
  const lat = s.endToEndLatencySeconds
  const lines = [
    header,
    '',
    `raw in            ${r(TOPICS.transactionsRaw)}  ${c(TOPICS.transactionsRaw)}   (produced ${s.sampleTrafficProduced})`,
    `enriched          ${r(TOPICS.transactionsEnriched)}  ${c(TOPICS.transactionsEnriched)}   MATCHED ${o('MATCHED')} · NOT_FOUND ${o('NOT_FOUND')} · REJECTED ${o('REJECTED')}`,
    `dead letters      ${r(TOPICS.transactionsDlq)}  ${c(TOPICS.transactionsDlq)}`,
    `invalidations     ${r(TOPICS.merchantInvalidations)}  ${c(TOPICS.merchantInvalidations)}`,
    `shops/merchants   ${r(TOPICS.merchantShops)}  ${c(TOPICS.merchantShops)} / ${c(TOPICS.merchantMerchants)} written · ${c(TOPICS.merchantFetched)} fetched on misses`,
    `bank              ${r(TOPICS.bankTransactions)}  ${c(TOPICS.bankConsents)} consent updates · ${c(TOPICS.bankTransactions)} bank transactions`,
    '',
    `end-to-end        ${lat ? `p50 ${formatSeconds(lat.p50)} · p99 ${formatSeconds(lat.p99)} (last 10 s, ${lat.samples} records)` : 'no enriched record in the last 10 s'}`,
    `consumer lag      ${Object.entries(s.consumerLag).map(([g, n]) => `${g} ${n}`).join(' · ') || '…'}`,
    `API drift         ${describeContractDrift(s.contractDrift)}`,
    '',
    `${'service'.padEnd(20)} ${'restarts'.padEnd(9)} health`,
    ...Object.entries(s.services).map(([name, v]) => `${name.padEnd(20)} ${String(v.restarts).padEnd(9)} ${v.health}${v.lastExit && v.restarts > 0 ? ` · last exit: ${v.lastExit}` : ''}`),
    '',
    'latest:',
    ...recent.map((line) => `  ${line}`),
  ]
  return lines.join('\n')
}

/** One line per refresh when stdout is not a terminal and --no-ui is not given. */
export function renderSummaryLine(s: StatusSnapshot): string {
  const c = (t: string) => s.counts[t] ?? 0
  const o = (k: string) => s.outcomes[k] ?? 0
  const restarts = Object.entries(s.services).filter(([, v]) => v.restarts > 0).map(([n, v]) => `${n} ${v.restarts}`)
  return [
    `raw in ${c(TOPICS.transactionsRaw)} (produced ${s.sampleTrafficProduced})`,
    `enriched ${c(TOPICS.transactionsEnriched)} MATCHED ${o('MATCHED')} · NOT_FOUND ${o('NOT_FOUND')} · REJECTED ${o('REJECTED')}`,
    `dead letters ${c(TOPICS.transactionsDlq)}`,
    `invalidations ${c(TOPICS.merchantInvalidations)}`,
    `restarts ${restarts.join(', ') || 'none'}`,
  ].join(' | ')
}

function formatSeconds(seconds: number): string {
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`
}
