import { describe, expect, it } from 'vitest'
import { SingleFlight } from './single-flight.ts'

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

describe('SingleFlight', () => {
  it('runs one task per key for concurrent callers and shares its result', async () => {
    const flight = new SingleFlight<string, number>()
    const gate = deferred<number>()
    let calls = 0
    const task = () => {
      calls++
      return gate.promise
    }
    const results = Promise.all([flight.run('k', task), flight.run('k', task), flight.run('k', task)])
    const other = flight.run('other', async () => 7)
    expect(flight.has('k')).toBe(true)
    gate.resolve(42)
    expect(await results).toEqual([42, 42, 42])
    expect(await other).toBe(7)
    expect(calls).toBe(1)
    expect(flight.has('k')).toBe(false)
  })

  it('does not cache failures: the next caller runs the task again', async () => {
    const flight = new SingleFlight<string, string>()
    let calls = 0
    const failing = async () => {
      calls++
      throw new Error('token endpoint down')
    }
    await expect(Promise.all([flight.run('t', failing), flight.run('t', failing)])).rejects.toThrow(
      'token endpoint down',
    )
    expect(calls).toBe(1)
    await expect(flight.run('t', async () => 'fresh')).resolves.toBe('fresh')
  })
})
