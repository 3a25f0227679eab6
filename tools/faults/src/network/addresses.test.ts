import { describe, expect, it } from 'vitest'
import { ownerOf, planNetwork } from './addresses.ts'

describe('planNetwork', () => {
  it('names everything after the owner pid, within 15 characters for interfaces, parties from .11', () => {
    const plan = planNetwork(4_194_303, ['kafka-1', 'transaction-ingest'], new Set())
    expect(plan.bridge).toBe('tepf4194303b')
    expect(plan.parties.map((p) => [p.namespace, p.hostVeth, p.address])).toEqual([
      ['tepf4194303-kafka-1', 'tepf4194303v0', `${plan.subnet}.11`],
      ['tepf4194303-transaction-ingest', 'tepf4194303v1', `${plan.subnet}.12`],
    ])
    // The namespace end is `<hostVeth>p` until it is renamed eth0 inside the namespace.
    for (const name of [plan.bridge, ...plan.parties.map((p) => `${p.hostVeth}p`)]) expect(name.length).toBeLessThanOrEqual(15)
    expect(plan.rootAddress).toBe(`${plan.subnet}.1`)
  })

  it('skips a /24 already routed on the machine (another run, another network)', () => {
    expect(planNetwork(7, [], new Set()).subnet).toBe('10.213.7')
    expect(planNetwork(7, [], new Set(['10.213.7', '10.213.8'])).subnet).toBe('10.213.9')
  })
})

describe('ownerOf', () => {
  it('reads the owner pid from the names of ours and nothing else', () => {
    expect(ownerOf('tepf123-kafka-1')).toBe(123)
    expect(ownerOf('tepf123b')).toBe(123)
    expect(ownerOf('tepf123v4')).toBe(123)
    expect(ownerOf('eth0')).toBeUndefined()
    expect(ownerOf('tepfx-kafka-1')).toBeUndefined()
  })
})
