import { afterEach, describe, expect, it, vi } from 'vitest'
import { CommitCadence, type CadenceHost } from './commit-cadence.ts'
import type { InputMessage } from './input-message.ts'
import { newPartitionState, type PartitionState, type Taken } from './partition-state.ts'
import { WakeSignal } from './wake-signal.ts'

afterEach(() => {
  vi.useRealTimers()
})

function fakeLoop() {
  const s = newPartitionState('raw', 0)
  const parts = new Map<string, PartitionState>([[s.key, s]])
  const wake = new WakeSignal()
  let offset = 0n
  const host = { parts, running: true, inflight: 0, backlogged: false }
  const view: CadenceHost = {
    parts,
    isRunning: () => host.running,
    inflight: () => host.inflight,
    backlogged: () => host.backlogged,
  }
  /** `n` records of the partition finished (as the pump moves them to done) and the loop is woken. */
  const finish = (n: number) => {
    for (let i = 0; i < n; i++) {
      const message = { topic: 'raw', partition: 0, offset: offset++ } as unknown as InputMessage
      s.done.push({ message, outcome: { kind: 'outputs', record: { topic: 'raw', partition: 0 } as never, outputs: [] } })
    }
    wake.wake()
  }
  return { host, view, wake, finish }
}

const count = (taken: Taken[]) => taken.reduce((n, t) => n + t.done.length, 0)

describe('CommitCadence', () => {
  it('commits finished records at once when the input is light, without waiting for the linger', async () => {
    vi.useFakeTimers()
    const loop = fakeLoop()
    const cadence = new CommitCadence(loop.view, loop.wake, { maxPerTxn: 3_000, lingerMs: 60_000 })
    let taken: Taken[] | undefined
    const next = cadence.next(0).then((t) => (taken = t))
    loop.finish(10)
    // No timer is advanced: a transaction that lingered would still be waiting.
    await vi.advanceTimersByTimeAsync(0)
    expect(taken).toBeDefined()
    expect(count(taken!)).toBe(10)
    await next
  })

  it('lingers for a fuller transaction while the input is backlogged, up to maxPerTxn', async () => {
    vi.useFakeTimers()
    const loop = fakeLoop()
    loop.host.backlogged = true
    const cadence = new CommitCadence(loop.view, loop.wake, { maxPerTxn: 100, lingerMs: 5 })
    let taken: Taken[] | undefined
    void cadence.next(0).then((t) => (taken = t))
    loop.finish(10)
    await vi.advanceTimersByTimeAsync(4)
    expect(taken).toBeUndefined()
    loop.finish(20)
    await vi.advanceTimersByTimeAsync(1)
    expect(count(taken!)).toBe(30)

    // A full transaction goes before the linger ends.
    taken = undefined
    void cadence.next(1).then((t) => (taken = t))
    loop.finish(40)
    await vi.advanceTimersByTimeAsync(1)
    expect(taken).toBeUndefined()
    loop.finish(70)
    await vi.advanceTimersByTimeAsync(0)
    expect(count(taken!)).toBe(100)
  })

  it('waits for records while nothing finished, and ends with none once stopped and idle', async () => {
    const loop = fakeLoop()
    const cadence = new CommitCadence(loop.view, loop.wake, { maxPerTxn: 100, lingerMs: 5 })
    const next = cadence.next(0)
    loop.host.running = false
    loop.wake.wake()
    await expect(next).resolves.toEqual([])
  })
})
