/**
 * Least-squares slope of a memory series, in units per hour. A series may span
 * several lives of a process (killed and restarted by the soak): each life gets
 * its own intercept and they share one slope (pooled within-life regression),
 * so the drop at a restart does not read as a shrinking heap, and a leak shows
 * as the same climb in every life.
 */

export interface Point {
  /** Epoch ms. */
  at: number
  value: number
}

const HOUR_MS = 3_600_000

/** Slope of `points` (one life), units per hour; undefined with fewer than two distinct times. */
export function leastSquaresSlope(points: readonly Point[]): number | undefined {
  return pooledSlope([points])
}

/** One slope shared by every segment (each with its own intercept), units per hour. */
export function pooledSlope(segments: ReadonlyArray<readonly Point[]>): number | undefined {
  let sxy = 0
  let sxx = 0
  for (const seg of segments) {
    if (seg.length < 2) continue
    const tMean = seg.reduce((s, p) => s + p.at, 0) / seg.length
    const vMean = seg.reduce((s, p) => s + p.value, 0) / seg.length
    for (const p of seg) {
      const dt = (p.at - tMean) / HOUR_MS
      sxy += dt * (p.value - vMean)
      sxx += dt * dt
    }
  }
  return sxx === 0 ? undefined : sxy / sxx
}

/**
 * Growth within each life, summed: last minus first of every segment. Over a
 * window that holds a restart this is what the processes grew while they ran,
 * not the fall at the restart. A segment spanning less than `minSpanMs` is left
 * out: two samples a minute apart measure where a garbage-collected heap stood
 * at those two moments (±50 MB for the ingest's 64 MB young generation), not a
 * trend.
 */
export function growthWithinSegments(segments: ReadonlyArray<readonly Point[]>, minSpanMs = 0): number | undefined {
  const usable = segments.filter((s) => s.length >= 2 && s[s.length - 1]!.at - s[0]!.at >= minSpanMs)
  if (usable.length === 0) return undefined
  return usable.reduce((sum, s) => sum + s[s.length - 1]!.value - s[0]!.value, 0)
}
