import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

/**
 * CPU time of processes from /proc/<pid>/stat (Linux): user + system time of
 * every thread of the process (`self`) and of its children that exited and were
 * waited for (`children`, e.g. the ingest's table loader). In microseconds.
 */
export interface CpuTime {
  selfUs: number
  childrenUs: number
}

let ticksPerSecond: number | undefined

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

/** Parses the text of /proc/<pid>/stat; exported for its unit test. */
export function parseProcStat(stat: string, ticks: number): CpuTime {
  // The command name (field 2) is in parentheses and may contain spaces: count from after it.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // rest[0] is field 3 (state); utime, stime, cutime, cstime are fields 14-17.
  const field = (n: number) => Number(rest[n - 3])
  const us = (t: number) => Math.round((t * 1_000_000) / ticks)
  return { selfUs: us(field(14) + field(15)), childrenUs: us(field(16) + field(17)) }
}

export function processCpu(pid: number): CpuTime {
  return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'), clockTicks())
}

/** Like processCpu, but undefined once the process is gone (its figures went with it). */
export function processCpuIfAlive(pid: number | undefined): CpuTime | undefined {
  if (pid === undefined) return undefined
  try {
    return processCpu(pid)
  } catch {
    return undefined
  }
}

/**
 * Adds up the CPU a process (or a series of processes: the crash scenario
 * restarts the ingest) spends between `start` and `stop`.
 */
export class CpuMeter {
  #totalUs = 0
  #pid: number | undefined
  #from: CpuTime | undefined

  /** Starts counting `pid` from now. */
  start(pid: number | undefined): void {
    this.#pid = pid
    this.#from = processCpuIfAlive(pid)
  }

  /** Adds what the current process used since start(); call it before the process ends. */
  stop(): void {
    const now = processCpuIfAlive(this.#pid)
    if (now !== undefined && this.#from !== undefined) this.#totalUs += now.selfUs - this.#from.selfUs
    this.#pid = undefined
    this.#from = undefined
  }

  get totalUs(): number {
    return this.#totalUs
  }
}

/** µs of CPU per event, one decimal. */
export function perEvent(cpuUs: number, events: number): number {
  return events > 0 ? Math.round((cpuUs / events) * 10) / 10 : Number.NaN
}
