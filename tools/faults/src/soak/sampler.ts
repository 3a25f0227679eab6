import { readFile } from 'node:fs/promises'
import type { FaultSystem } from '../system.ts'

export interface MemorySample {
  /** The supervised process (service, instance or simulator). */
  process: string
  at: number
  pid: number
  /** VmRSS of /proc/<pid>/status, bytes. */
  rssBytes: number
  /** Its anonymous and file-backed parts (RssAnon, RssFile): a memory-mapped store grows RssFile, a leak RssAnon. */
  rssAnonBytes?: number
  rssFileBytes?: number
  /** prom-client's nodejs_heap_size_used_bytes from the process's /metrics, when it has one and answered. */
  heapUsedBytes?: number
  /**
   * nodejs_heap_size_total_bytes (what V8 holds for its heap, used or not) and
   * nodejs_external_memory_bytes (Buffers and other memory V8 objects own outside
   * the heap): with RssAnon they tell a heap that grew its reserve, Buffers kept
   * alive and memory the allocator did not give back from one another.
   */
  heapTotalBytes?: number
  externalBytes?: number
}

/** VmRSS (and RssAnon, RssFile) of a process in bytes, or undefined when it is gone. */
export async function readRss(pid: number): Promise<{ rss: number; anon?: number; file?: number } | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined)
  const field = (name: string) => {
    const m = status === undefined ? null : new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, 'm').exec(status)
    return m === null ? undefined : Number(m[1]) * 1024
  }
  const rss = field('VmRSS')
  if (rss === undefined) return undefined
  const anon = field('RssAnon')
  const file = field('RssFile')
  return { rss, ...(anon === undefined ? {} : { anon }), ...(file === undefined ? {} : { file }) }
}

/** The value of an unlabelled-or-labelled gauge `name` in a Prometheus text exposition, or undefined. */
export function gaugeFromMetrics(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+([0-9.eE+-]+)\\s*$`, 'm').exec(text)
  return m === null ? undefined : Number(m[1])
}

/** The prom-client gauges each sample reads from a service's /metrics, by the sample's field. */
const SAMPLED_GAUGES = {
  heapUsedBytes: 'nodejs_heap_size_used_bytes',
  heapTotalBytes: 'nodejs_heap_size_total_bytes',
  externalBytes: 'nodejs_external_memory_bytes',
} as const satisfies Record<string, string>


/**
 * Samples every supervised process's RSS (from /proc) and V8 heap (from its
 * prom-client /metrics; the simulators have none) every `everyMs`, keyed by
 * process name and pid, so a restarted process starts a new life in the series.
 */
export class MemorySampler {
  readonly samples: MemorySample[] = []
  readonly #system: FaultSystem
  readonly #everyMs: number
  #timer: NodeJS.Timeout | undefined
  #busy: Promise<unknown> | undefined

  constructor(system: FaultSystem, everyMs = 60_000) {
    this.#system = system
    this.#everyMs = everyMs
  }

  start(): void {
    this.#busy = this.sample()
    this.#timer = setInterval(() => {
      this.#busy = this.sample()
    }, this.#everyMs)
  }

  /** One round over every process; returns what it read. */
  async sample(): Promise<MemorySample[]> {
    const at = Date.now()
    const round = await Promise.all(
      [...this.#system.processes].map(async ([name, p]): Promise<MemorySample | undefined> => {
        const pid = p.child?.pid
        if (pid === undefined) return undefined
        const rss = await readRss(pid)
        if (rss === undefined) return undefined
        const port = p.spec.env.METRICS_PORT
        // The metrics port on the host the health check reaches (a service in its own network namespace has its own address).
        const host = new URL(p.spec.healthUrl).hostname
        const metrics =
          port === undefined
            ? undefined
            : await fetch(`http://${host}:${port}/metrics`, { signal: AbortSignal.timeout(5_000) })
                .then(async (r) => (r.ok ? r.text() : undefined))
                .catch(() => undefined)
        const sample: MemorySample = { process: name, at, pid, rssBytes: rss.rss }
        if (rss.anon !== undefined) sample.rssAnonBytes = rss.anon
        if (rss.file !== undefined) sample.rssFileBytes = rss.file
        if (metrics !== undefined)
          for (const [key, gauge] of Object.entries(SAMPLED_GAUGES) as [keyof typeof SAMPLED_GAUGES, string][]) {
            const value = gaugeFromMetrics(metrics, gauge)
            if (value !== undefined) sample[key] = value
          }
        return sample
      }),
    )
    const taken = round.filter((s) => s !== undefined)
    this.samples.push(...taken)
    return taken
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer)
    await this.#busy
  }
}
