/**
 * The live view's "API drift" line: the `tep_api_contract_drift_total` counters
 * every service exports when a real API answers in a shape the simulators do not
 * (docs/operations.md). Read from each service's /metrics beside its /readyz, so
 * the view needs no channel of its own into the services.
 */
const DRIFT_LINE = /^tep_api_contract_drift_total\{([^}]*)\}\s+([0-9.eE+-]+)$/

/** `api operation field kind` -> count, summed over the services that report it. */
export function parseContractDrift(metricsText: string, into = new Map<string, number>()): Map<string, number> {
  for (const line of metricsText.split('\n')) {
    const match = DRIFT_LINE.exec(line)
    if (!match) continue
    const labels = new Map<string, string>()
    for (const pair of match[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels.set(pair[1]!, pair[2]!)
    const key = ['api', 'operation', 'field', 'kind'].map((l) => labels.get(l) ?? '?').join(' ')
    into.set(key, (into.get(key) ?? 0) + Number(match[2]))
  }
  return into
}

/** Polls /metrics of every service with a health server and keeps the summed drift counts. */
export class ContractDriftPoller {
  drift = new Map<string, number>()

  async poll(healthUrls: readonly string[]): Promise<void> {
    const next = new Map<string, number>()
    await Promise.all(
      healthUrls.map(async (url) => {
        try {
          const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(1_500) })
          if (res.ok) parseContractDrift(await res.text(), next)
        } catch {
          // a service that does not answer shows as such in the health table; its drift is simply not summed this round
        }
      }),
    )
    this.drift = next
  }
}

/** `enrichment invalidations level param-refused ×3 · bank token expires_in absent ×1`, most frequent first. */
export function describeContractDrift(drift: Record<string, number>, limit = 4): string {
  const entries = Object.entries(drift).sort((a, b) => b[1] - a[1])
  if (entries.length === 0) return 'none: the APIs answer as the clients expect'
  const shown = entries.slice(0, limit).map(([k, n]) => `${k} ×${n}`)
  if (entries.length > limit) shown.push(`+${entries.length - limit} more (tep_api_contract_drift_total)`)
  return shown.join(' · ')
}
