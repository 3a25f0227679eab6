import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { lowerPriority, type PriorityOs } from './process-priority.ts'

function fakeOs(levels: Record<number, number>, refuse: number[] = []): PriorityOs & { levels: Record<number, number> } {
  return {
    levels,
    threads: () => Object.keys(levels).map(Number),
    get: (id) => levels[id]!,
    set: (id, nice) => {
      if (refuse.includes(id)) throw new Error(`EPERM on ${id}`)
      levels[id] = nice
    },
  }
}

describe('lowerPriority', () => {
  it('moves every thread of the process to the nice level, not only the calling one', () => {
    const os = fakeOs({ 100: 0, 101: 0, 102: 0 })
    expect(lowerPriority(10, os)).toEqual({ nice: 10, lowered: 3, kept: 0, failed: 0 })
    expect(os.levels).toEqual({ 100: 10, 101: 10, 102: 10 })
  })

  it('never raises a thread already at a lower priority, and 0 changes nothing', () => {
    const os = fakeOs({ 100: 15, 101: 0 })
    expect(lowerPriority(10, os)).toMatchObject({ lowered: 1, kept: 1 })
    expect(os.levels).toEqual({ 100: 15, 101: 10 })
    const untouched = fakeOs({ 100: 0 })
    expect(lowerPriority(0, untouched)).toMatchObject({ lowered: 0, kept: 0 })
    expect(untouched.levels).toEqual({ 100: 0 })
  })

  it('counts a refused thread and goes on with the others', () => {
    const os = fakeOs({ 100: 0, 101: 0 }, [100])
    expect(lowerPriority(10, os)).toEqual({ nice: 10, lowered: 1, kept: 0, failed: 1, error: 'EPERM on 100' })
    expect(os.levels[101]).toBe(10)
  })

  it('passes over a thread that ended since the list was read (ESRCH), without a warning', () => {
    const os = fakeOs({ 100: 0, 101: 0 })
    os.get = (id) => {
      if (id === 100) throw Object.assign(new Error('ESRCH: no such process'), { code: 'ESRCH' })
      return os.levels[id]!
    }
    expect(lowerPriority(10, os)).toEqual({ nice: 10, lowered: 1, kept: 0, failed: 0 })
  })

  it('rejects a level outside 0-19', () => {
    expect(() => lowerPriority(20)).toThrow(RangeError)
    expect(() => lowerPriority(-1)).toThrow(RangeError)
  })

  it('on Linux (the machine kind this runs on), every thread of a real process ends at the level', () => {
    // A child process, so that this test's own worker keeps its priority.
    const script = `
      import { readdirSync, readFileSync } from 'node:fs'
      import { lowerPriority } from ${JSON.stringify(new URL('./process-priority.ts', import.meta.url).href)}
      lowerPriority(7)
      // Field 19 of /proc/<tid>/stat is the nice level (after the command in parentheses).
      const nice = readdirSync('/proc/self/task').map((t) => Number(readFileSync('/proc/self/task/' + t + '/stat', 'utf8').split(') ')[1].split(' ')[16]))
      process.stdout.write(JSON.stringify(nice))`
    const levels = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as number[]
    expect(levels.length).toBeGreaterThan(1)
    expect(new Set(levels)).toEqual(new Set([7]))
  })
})
