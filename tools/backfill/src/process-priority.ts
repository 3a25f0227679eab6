import { readdirSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

/**
 * The backfill's default nice level (`--nice`): it runs below the live services
 * on a shared machine. The yield policy (yield-policy.ts) reacts to the live
 * lag a look (250 ms) later; the kernel's scheduler gives the live ingest the
 * CPU at once when both want it. At nice 10 a CPU-bound backfill gets about a
 * tenth of a core's time against a process at nice 0 that wants it (the CFS
 * weights are 110 and 1024), and all of the idle time otherwise, so on an idle
 * machine it is as fast as before.
 */
export const DEFAULT_NICE = 10

/** What lowerPriority needs of the system, replaced in tests. */
export interface PriorityOs {
  /** Ids of the process's threads (Linux: /proc/self/task); [] where not known. */
  threads(): number[]
  get(id: number): number
  set(id: number, nice: number): void
}

const systemOs: PriorityOs = {
  threads: () => {
    try {
      return readdirSync('/proc/self/task').map(Number).filter(Number.isInteger)
    } catch {
      return []
    }
  },
  get: (id) => getPriority(id),
  set: (id, nice) => setPriority(id, nice),
}

export interface PriorityOutcome {
  /** The nice level asked for. */
  nice: number
  /** Threads moved to it. */
  lowered: number
  /** Threads left as they were: already at or below that priority. */
  kept: number
  /** Threads whose change the system refused (the message of the first). */
  failed: number
  error?: string
}

/**
 * Lowers the priority of every thread of this process to `nice` (never raises one:
 * that needs privileges and is not this tool's business). On Linux the nice level
 * belongs to each thread, and os.setPriority(0, n) moves only the calling one: the
 * threads Node started before (libuv's pool, V8's garbage-collection and compiler
 * helpers) would stay at 0. Threads started later inherit the level of the thread
 * that starts them. 0 leaves everything as it is.
 */
export function lowerPriority(nice: number, os: PriorityOs = systemOs): PriorityOutcome {
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new RangeError(`nice must be a whole number from 0 to 19, got ${nice}`)
  const outcome: PriorityOutcome = { nice, lowered: 0, kept: 0, failed: 0 }
  if (nice === 0) return outcome
  const threads = os.threads()
  // Without a thread list (not Linux): the calling thread, which is the process elsewhere.
  for (const id of threads.length > 0 ? threads : [0]) {
    try {
      if (os.get(id) >= nice) {
        outcome.kept += 1
        continue
      }
      os.set(id, nice)
      outcome.lowered += 1
    } catch (err) {
      // A thread that ended since the list was read has nothing left to lower.
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') continue
      // A system that refuses: the backfill runs all the same, and says so.
      outcome.failed += 1
      outcome.error ??= (err as Error).message
    }
  }
  return outcome
}
