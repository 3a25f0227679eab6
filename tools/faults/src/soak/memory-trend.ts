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
  /** Least-squares slope over the whole soak, one intercept per life, each life's warm-up left out; null with too few samples. */
  rssSlopeMbPerHour: number | null
  /** The same over the last window (default 15 minutes). */
  rssSlopeLastWindowMbPerHour: number | null
  /**
   * Last minus first RSS of each life (after its warm-up) within the last window,
   * summed over the lives observed there for at least MIN_GROWTH_SPAN_MS; null when none was.
   */
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

/**
 * A process's first minutes after a (re)start are its warm-up (the ingest loads
 * its table, V8 compiles and grows its heap): left out of the slopes and of the
 * growth, or every restart the soak causes would read as a leak.
 */
export const WARMUP_MS = 2 * 60_000

/**
 * The shortest stretch of a life (after its warm-up, inside the window) whose
 * growth is judged. In the 2026-11-29 soak a transaction-ingest restarted by a
 * fault had two settled samples a minute apart in the window, 241 and 291 MB,
 * while its committed heap alone moved by 50 MB between samples: that life's
 * "growth" was the heap's sizing at two moments, and it was most of the
 * service's 70 MB. A leak shows in the lives long enough to show a trend.
 */
export const MIN_GROWTH_SPAN_MS = 3 * 60_000

const settled = (life: Point[]): Point[] => (life.length === 0 ? life : life.filter((p) => p.at >= life[0]!.at + WARMUP_MS))

export function memoryTrends(samples: readonly MemorySample[], windowMs = 15 * 60_000): MemoryTrend[] {
  const byProcess = new Map<string, MemorySample[]>()
  for (const s of samples) byProcess.set(s.process, [...(byProcess.get(s.process) ?? []), s])
  return [...byProcess].map(([process, all]) => {
    const sorted = [...all].sort((a, b) => a.at - b.at)
    const end = sorted[sorted.length - 1]!.at
    const inWindow = (life: Point[]) => life.filter((p) => p.at >= end - windowMs)
    const rssLives = lives(sorted, (s) => s.rssBytes).map(settled)
    const heapLives = lives(sorted, (s) => s.heapUsedBytes).map(settled)
    const heapLast = [...sorted].reverse().find((s) => s.heapUsedBytes !== undefined)?.heapUsedBytes
    return {
      process,
      samples: sorted.length,
      lives: rssLives.length,
      rssFirstMb: round1(sorted[0]!.rssBytes / MB)!,
      rssLastMb: round1(sorted[sorted.length - 1]!.rssBytes / MB)!,
      rssMaxMb: round1(Math.max(...sorted.map((s) => s.rssBytes)) / MB)!,
      rssSlopeMbPerHour: round1(pooledSlope(rssLives)),
      rssSlopeLastWindowMbPerHour: round1(pooledSlope(rssLives.map(inWindow))),
      rssGrowthLastWindowMb: round1(growthWithinSegments(rssLives.map(inWindow), MIN_GROWTH_SPAN_MS)),
      heapLastMb: round1(heapLast === undefined ? undefined : heapLast / MB),
      heapSlopeMbPerHour: round1(pooledSlope(heapLives)),
      heapSlopeLastWindowMbPerHour: round1(pooledSlope(heapLives.map(inWindow))),
    }
  })
}
