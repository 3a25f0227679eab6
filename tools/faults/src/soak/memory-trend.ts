import type { MemorySample } from './sampler.ts'
import { growthWithinSegments, pooledSlope, type Point } from './slope.ts'

const MB = 1024 * 1024

/** One process's memory over the soak: RSS and heap slopes (MB per hour) and the RSS growth of the last window. */
export interface MemoryTrend {
  process: string
  samples: number
  /** Process lives seen (1 + restarts caught between samples). */
  lives: number
  rssFirstMb: number
  rssLastMb: number
  rssMaxMb: number
  /** Least-squares slope over the whole soak, one intercept per life; null with too few samples. */
  rssSlopeMbPerHour: number | null
  /** The same over the last window (default 15 minutes). */
  rssSlopeLastWindowMbPerHour: number | null
  /** Last minus first RSS of each life within the last window, summed. */
  rssGrowthLastWindowMb: number | null
  heapLastMb: number | null
  heapSlopeMbPerHour: number | null
  heapSlopeLastWindowMbPerHour: number | null
}

const round1 = (n: number | undefined) => (n === undefined ? null : Math.round(n * 10) / 10)

/** Consecutive samples of the same pid: one life of the process. */
function lives(samples: readonly MemorySample[], value: (s: MemorySample) => number | undefined): Point[][] {
  const out: Point[][] = []
  let pid: number | undefined
  for (const s of samples) {
    const v = value(s)
    if (s.pid !== pid) {
      out.push([])
      pid = s.pid
    }
    if (v !== undefined) out[out.length - 1]!.push({ at: s.at, value: v / MB })
  }
  return out
}

export function memoryTrends(samples: readonly MemorySample[], windowMs = 15 * 60_000): MemoryTrend[] {
  const byProcess = new Map<string, MemorySample[]>()
  for (const s of samples) byProcess.set(s.process, [...(byProcess.get(s.process) ?? []), s])
  return [...byProcess].map(([process, all]) => {
    const sorted = [...all].sort((a, b) => a.at - b.at)
    const end = sorted[sorted.length - 1]!.at
    const recent = sorted.filter((s) => s.at >= end - windowMs)
    const rss = (s: MemorySample) => s.rssBytes
    const heap = (s: MemorySample) => s.heapUsedBytes
    const heapLast = [...sorted].reverse().find((s) => s.heapUsedBytes !== undefined)?.heapUsedBytes
    return {
      process,
      samples: sorted.length,
      lives: lives(sorted, rss).length,
      rssFirstMb: round1(sorted[0]!.rssBytes / MB)!,
      rssLastMb: round1(sorted[sorted.length - 1]!.rssBytes / MB)!,
      rssMaxMb: round1(Math.max(...sorted.map((s) => s.rssBytes)) / MB)!,
      rssSlopeMbPerHour: round1(pooledSlope(lives(sorted, rss))),
      rssSlopeLastWindowMbPerHour: round1(pooledSlope(lives(recent, rss))),
      rssGrowthLastWindowMb: round1(growthWithinSegments(lives(recent, rss))),
      heapLastMb: round1(heapLast === undefined ? undefined : heapLast / MB),
      heapSlopeMbPerHour: round1(pooledSlope(lives(sorted, heap))),
      heapSlopeLastWindowMbPerHour: round1(pooledSlope(lives(recent, heap))),
    }
  })
}
