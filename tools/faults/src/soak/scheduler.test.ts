import { describe, expect, it } from 'vitest'
import { kindOf, soakCatalogue } from './catalogue.ts'
import { planFaults, startTime } from './scheduler.ts'

const faults = soakCatalogue(3).faults.map((f) => f.name)
const options = { seed: 42, durationMs: 60 * 60_000, faults }

describe('the soak plan (seeded scheduler)', () => {
  it('is the same plan for the same seed', () => {
    expect(planFaults(options)).toEqual(planFaults({ ...options }))
  })

  it('is another plan for another seed', () => {
    expect(planFaults({ ...options, seed: 43 }).map((p) => [p.offsetMs, p.fault])).not.toEqual(planFaults(options).map((p) => [p.offsetMs, p.fault]))
  })

  it('starts a fault every 1-3 minutes and none in the last minute', () => {
    const plan = planFaults(options)
    const gaps = plan.map((p, i) => p.offsetMs - (i === 0 ? 0 : plan[i - 1]!.offsetMs))
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(60_000)
    expect(Math.max(...gaps)).toBeLessThanOrEqual(180_000)
    expect(plan[plan.length - 1]!.offsetMs).toBeLessThanOrEqual(options.durationMs - 60_000)
    // An hour at a mean gap of 2 minutes: about 30 faults.
    expect(plan.length).toBeGreaterThan(18)
    expect(plan.length).toBeLessThan(60)
  })

  it('draws only catalogue faults, and every kind shows up over a long run', () => {
    const plan = planFaults({ ...options, durationMs: 24 * 3_600_000 })
    for (const p of plan) expect(faults).toContain(p.fault)
    const kinds = new Set(faults.map(kindOf))
    expect(new Set(plan.map((p) => p.kind))).toEqual(kinds)
  })

  it('draws kinds evenly, not faults: the many API bursts do not crowd out the registry outage', () => {
    const plan = planFaults({ ...options, durationMs: 200 * 3_600_000 })
    const share = (kind: string) => plan.filter((p) => p.kind === kind).length / plan.length
    const kinds = new Set(faults.map(kindOf))
    expect(share('registry-outage')).toBeGreaterThan(0.6 / kinds.size)
    expect(share('enrichment-api')).toBeLessThan(1.6 / kinds.size)
  })

  it('plans nothing when no fault fits the topology or the duration', () => {
    expect(planFaults({ ...options, faults: [] })).toEqual([])
    expect(planFaults({ ...options, durationMs: 90_000 })).toEqual([])
  })

  it('never starts a fault before the previous one settled', () => {
    const [first] = planFaults(options)
    expect(startTime(1_000, first!, undefined)).toBe(1_000 + first!.offsetMs)
    expect(startTime(1_000, first!, 10_000_000)).toBe(10_000_000)
  })
})

describe('the soak catalogue', () => {
  it('keeps to what the topology can run', () => {
    const single = soakCatalogue(1)
    expect(single.faults.map((f) => f.name)).toContain('broker-kill:only')
    expect(single.faults.some((f) => f.topology === 'cluster')).toBe(false)
    expect(single.skipped.map((s) => s.name)).toEqual(expect.arrayContaining(['leader-kill', 'broker-lost']))
    const cluster = soakCatalogue(3)
    expect(cluster.faults.some((f) => f.topology === 'single')).toBe(false)
    expect(cluster.faults.map((f) => f.name)).toEqual(expect.arrayContaining(['kill-service:transaction-ingest', 'leader-kill', 'txn-coordinator-kill', 'group-coordinator-kill', 'broker-lost', 'broker-pause', 'registry-outage', 'enrichment-api:latency', 'bank-api:429']))
  })

  it('draws the partitions only when the run has the cluster network', () => {
    expect(soakCatalogue(3).faults.map((f) => f.name)).toEqual(expect.arrayContaining(['partition-bridge', 'lossy-link', 'partition-service-from-cluster']))
    const without = soakCatalogue(3, { networkProblem: 'not root' })
    expect(without.faults.some((f) => kindOf(f.name) === 'partition')).toBe(false)
    expect(without.skipped.find((s) => s.name === 'partition-bridge')?.why).toContain('not root')
    expect(soakCatalogue(1).skipped.map((s) => s.name)).toContain('lossy-link')
  })

  it('takes extra faults and keeps a name once', () => {
    const extra = { name: 'partition-bridge', topology: 'cluster' as const, inject: () => Promise.reject(new Error('not here')) }
    const dup = { name: 'registry-outage', topology: 'any' as const, inject: () => Promise.reject(new Error('not here')) }
    const c = soakCatalogue(3, { extra: [extra, dup] })
    expect(kindOf('partition-bridge')).toBe('partition')
    expect(kindOf('leader-kill')).toBe('broker-kill')
    expect(c.faults.filter((f) => f.name === 'registry-outage')).toHaveLength(1)
    expect(c.faults.map((f) => f.name)).toContain('partition-bridge')
    expect(soakCatalogue(1, { extra: [extra] }).skipped.map((s) => s.name)).toContain('partition-bridge')
  })
})
