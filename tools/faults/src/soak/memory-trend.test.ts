import { describe, expect, it } from 'vitest'
import { memoryTrends } from './memory-trend.ts'
import { gaugeFromMetrics } from './sampler.ts'
import type { MemorySample } from './sampler.ts'

const MB = 2 ** 20
const MIN = 60_000

describe('memory trends of the soak', () => {
  it('reports the last window growth of each life after its warm-up, not the fall at a restart', () => {
    // 30 minutes, a sample a minute; +1 MB a minute; killed at minute 20 and back 100 MB lower.
    const samples: MemorySample[] = Array.from({ length: 31 }, (_, i) => ({
      process: 'refresher',
      at: i * MIN,
      pid: i < 20 ? 100 : 200,
      rssBytes: (i < 20 ? 200 + i : 100 + i) * MB,
      heapUsedBytes: (50 + i / 2) * MB,
    }))
    const [t] = memoryTrends(samples)
    expect(t).toMatchObject({ process: 'refresher', samples: 31, lives: 2, rssFirstMb: 200, rssLastMb: 130, rssMaxMb: 219 })
    expect(t!.rssSlopeMbPerHour).toBeCloseTo(60, 5)
    expect(t!.heapSlopeMbPerHour).toBeCloseTo(30, 5)
    // Last 15 minutes: minutes 15-19 of the first life (+4 MB) and, after its 2-minute warm-up, 22-30 of the second (+8 MB).
    expect(t!.rssGrowthLastWindowMb).toBeCloseTo(12, 5)
    expect(t!.rssSlopeLastWindowMbPerHour).toBeCloseTo(60, 5)
    expect(t!.heapLastMb).toBe(65)
  })

  it("leaves a restart's warm-up out: a fresh process climbing to its working size is not a leak", () => {
    // Killed at minute 10; the new life climbs 100 MB in its first 2 minutes, then stays flat.
    const samples: MemorySample[] = Array.from({ length: 20 }, (_, i) => ({
      process: 'transaction-ingest',
      at: i * MIN,
      pid: i < 10 ? 1 : 2,
      rssBytes: (i < 10 ? 250 : i === 10 ? 150 : i === 11 ? 200 : 250) * MB,
    }))
    const [t] = memoryTrends(samples)
    expect(t!.rssGrowthLastWindowMb).toBe(0)
    expect(t!.rssSlopeMbPerHour).toBe(0)
  })

  it('judges the growth of lives long enough to show a trend, not two samples a minute apart', () => {
    // The 2026-11-29 soak's ingest, simplified: a long first life flat at 400 MB, a life
    // restarted at minute 9 sampled twice after its warm-up (241, 291 MB), a third from minute 13, flat.
    const rss = [130, 363, 373, 375, 376, 390, 395, 408, 408, 409, 264, 334, 241, 291, 338, 355, 393, 394, 395, 399, 399]
    const samples: MemorySample[] = rss.map((mb, i) => ({ process: 'transaction-ingest', at: i * MIN, pid: i < 10 ? 1 : i < 14 ? 2 : 3, rssBytes: mb * MB }))
    const [t] = memoryTrends(samples)
    // Window minutes 5-20: life 1 at 5-9 (+19), life 2 only at 12-13 (left out), life 3 at 16-20 (+6).
    expect(t!.rssGrowthLastWindowMb).toBe(25)
  })

  it('still sees a leak that climbs through every long life', () => {
    const samples: MemorySample[] = Array.from({ length: 21 }, (_, i) => ({ process: 'refresher', at: i * MIN, pid: 7, rssBytes: (150 + 5 * i) * MB }))
    const [t] = memoryTrends(samples)
    expect(t!.rssGrowthLastWindowMb).toBe(75)
  })

  it('reads prom-client heap use from /metrics text', () => {
    const text = '# HELP nodejs_heap_size_used_bytes Process heap size used from Node.js in bytes.\n# TYPE nodejs_heap_size_used_bytes gauge\nnodejs_heap_size_used_bytes 52428800\nnodejs_heap_size_total_bytes 99\n'
    expect(gaugeFromMetrics(text, 'nodejs_heap_size_used_bytes')).toBe(52_428_800)
    expect(gaugeFromMetrics('nodejs_heap_size_used_bytes{service="x"} 1e6\n', 'nodejs_heap_size_used_bytes')).toBe(1_000_000)
    expect(gaugeFromMetrics('up 1\n', 'nodejs_heap_size_used_bytes')).toBeUndefined()
  })

  it('reads the committed heap and external memory gauges, not a name that only starts the same', () => {
    const text = 'nodejs_heap_size_total_bytes_extra 5\nnodejs_heap_size_total_bytes 73400320\nnodejs_external_memory_bytes{service="x"} 2.5e6\n'
    expect(gaugeFromMetrics(text, 'nodejs_heap_size_total_bytes')).toBe(73_400_320)
    expect(gaugeFromMetrics(text, 'nodejs_external_memory_bytes')).toBe(2_500_000)
    expect(gaugeFromMetrics(text, 'nodejs_heap_space_size_used_bytes')).toBeUndefined()
  })
})
