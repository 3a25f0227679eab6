import { describe, expect, it } from 'vitest'
import { mapInOrder, SKIPPED } from './ordered-map.ts'

/** A promise the test resolves by hand, to control completion order without timers. */
function deferred<T>() {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

describe('mapInOrder', () => {
  it('returns outcomes in input order although calls finish in reverse order', async () => {
    const gates = [0, 1, 2, 3].map(() => deferred<string>())
    const running = mapInOrder([0, 1, 2, 3], 4, (i) => gates[i]!.promise)
    for (const i of [3, 2, 1, 0]) gates[i]!.resolve(`v${i}`)
    expect(await running).toEqual(['v0', 'v1', 'v2', 'v3'].map((value) => ({ ok: true, value })))
  })

  it('never has more than `concurrency` calls in flight', async () => {
    let inFlight = 0
    let peak = 0
    const gates = Array.from({ length: 10 }, () => deferred<void>())
    const running = mapInOrder(gates, 3, async (gate) => {
      inFlight++
      peak = Math.max(peak, inFlight)
      await gate.promise
      inFlight--
    })
    // Release one at a time; each release lets exactly one more start.
    for (const gate of gates) {
      await Promise.resolve()
      gate.resolve()
    }
    await running
    expect(peak).toBe(3)
  })

  it('keeps a failure in its slot without stopping the others', async () => {
    const out = await mapInOrder([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('two')
      return n * 10
    })
    expect(out[0]).toEqual({ ok: true, value: 10 })
    expect(out[1]).toMatchObject({ ok: false, error: new Error('two') })
    expect(out[2]).toEqual({ ok: true, value: 30 })
  })

  it('starts nothing new once shouldContinue says stop, and marks the rest skipped', async () => {
    const started: number[] = []
    let stop = false
    const out = await mapInOrder(
      [1, 2, 3, 4],
      1,
      async (n) => {
        started.push(n)
        if (n === 2) stop = true
        return n
      },
      () => !stop,
    )
    expect(started).toEqual([1, 2])
    expect(out.slice(2)).toEqual([
      { ok: false, error: SKIPPED },
      { ok: false, error: SKIPPED },
    ])
  })

  it('rejects a non-positive concurrency', async () => {
    await expect(mapInOrder([1], 0, async (n) => n)).rejects.toThrow(/positive integer, got 0/)
  })
})
