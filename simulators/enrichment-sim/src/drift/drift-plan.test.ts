import { describe, expect, it } from 'vitest'
import { ContractDrift, DRIFT_VARIANTS, type DriftDimension } from './drift-plan.ts'

function draws(drift: ContractDrift, n: number): string[] {
  const out: string[] = []
  for (let i = 0; i < n; i++) for (const d of Object.keys(DRIFT_VARIANTS) as DriftDimension[]) out.push(drift.draw(d))
  return out
}

describe('ContractDrift', () => {
  it('draws the same sequence for the same seed, another for another seed', () => {
    expect(draws(new ContractDrift(7), 50)).toEqual(draws(new ContractDrift('7'), 50))
    expect(draws(new ContractDrift(7), 50)).not.toEqual(draws(new ContractDrift(8), 50))
  })

  it('serves every variant of the per-answer dimensions over a run, and logs each draw once', () => {
    const lines: string[] = []
    const drift = new ContractDrift(1, {}, { info: (_o, msg) => lines.push(msg) })
    draws(drift, 200)
    for (const d of ['currentTime', 'hasMore', 'lastId', 'batchType', 'tokenExpiresIn', 'entity'] as const)
      for (const v of DRIFT_VARIANTS[d]) expect(drift.drawn()).toContain(`${d}=${v}`)
    expect(lines).toHaveLength(new Set(lines).size)
    expect(lines.length).toBe(drift.drawn().length)
  })

  it('keeps the per-process dimensions fixed for the run, and takes overrides as given', () => {
    const drift = new ContractDrift(3)
    const level = drift.draw('level')
    expect(new Set(Array.from({ length: 50 }, () => drift.draw('level')))).toEqual(new Set([level]))
    const fixed = new ContractDrift(3, { level: 'refused-bare', hasMore: 'string' })
    expect(draws(fixed, 20).length).toBeGreaterThan(0)
    expect(fixed.drawn().filter((k) => k.startsWith('level=') || k.startsWith('hasMore='))).toEqual([
      'level=refused-bare',
      'hasMore=string',
    ])
  })
})
