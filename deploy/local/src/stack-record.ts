import { existsSync } from 'node:fs'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { StackPorts } from './ports.ts'
import { isProcessRunning, processCommandLine, terminate } from './process-control.ts'

/**
 * What a started stack leaves in its state dir (`stack.json`): enough to find,
 * verify and stop its processes from another process (`stack:down`, or the next
 * test run reaping a stack whose test runner crashed).
 */
export interface StackRecord {
  version: 1
  stateDir: string
  ports: StackPorts
  brokers: string[]
  registryUrl: string
  /** Node 1's pid (the only node of a single-broker stack). */
  kafkaPid: number
  /** Every Kafka node of the stack, node 1 first; absent in records written before clusters existed. */
  kafkaNodes?: KafkaNodeRecord[]
  registryPid: number
  /** The process whose lifetime bounds the stack (the test runner), or null for a detached `stack:up`. */
  ownerPid: number | null
  startedAt: string
}

export interface KafkaNodeRecord {
  nodeId: number
  pid: number
  /** The node's client (PLAINTEXT) port. */
  port: number
  controllerPort: number
  /** The address it listens on and advertises; absent means 127.0.0.1. */
  host?: string
  /** Its own log file and server.properties inside the state dir. */
  logFile: string
  propertiesFile: string
}

/** The Kafka nodes of a record, also for records that only know `kafkaPid`. */
export function kafkaNodesOf(record: StackRecord): Array<Pick<KafkaNodeRecord, 'nodeId' | 'pid'>> {
  return record.kafkaNodes ?? [{ nodeId: 1, pid: record.kafkaPid }]
}

export const RECORD_FILE = 'stack.json'

/**
 * Every JVM we start carries this system property. It is how we recognise our own
 * processes before signalling a pid from a file: pids get reused, and another
 * Kafka or Apicurio on the machine (a developer's, a shared dev stack) must never
 * be hit.
 */
export function stackMarker(stateDir: string): string {
  return `-Dtep.stack.dir=${path.resolve(stateDir)}`
}

const MAIN_CLASS = { kafka: 'kafka.Kafka', registry: 'quarkus-run.jar' } as const

/** True when `pid` is alive and its command line is the `role` JVM started for `stateDir`. */
export function isOurProcess(pid: number, role: 'kafka' | 'registry', stateDir: string): boolean {
  if (!isProcessRunning(pid)) return false
  const cmdline = processCommandLine(pid)
  return (
    cmdline !== undefined && cmdline.includes(stackMarker(stateDir)) && cmdline.includes(MAIN_CLASS[role])
  )
}

export async function writeRecord(record: StackRecord): Promise<void> {
  await writeFile(path.join(record.stateDir, RECORD_FILE), JSON.stringify(record, null, 2) + '\n')
}

export async function readRecord(stateDir: string): Promise<StackRecord | undefined> {
  try {
    return JSON.parse(await readFile(path.join(stateDir, RECORD_FILE), 'utf8')) as StackRecord
  } catch {
    return undefined
  }
}

export interface StopReport {
  /** pids that were ours and are now gone, with how they ended. */
  stopped: Array<{ role: 'kafka' | 'registry'; pid: number; how: 'terminated' | 'killed' | 'exited' }>
  /** pids in the record that were no longer ours (exited, or reused by someone else): left alone. */
  skipped: Array<{ role: 'kafka' | 'registry'; pid: number }>
}

/**
 * Stops the processes recorded in `stateDir` that are still ours, then removes
 * `stateDir`. Safe to call repeatedly and on a folder without a record.
 */
export async function stopRecordedStack(stateDir: string, graceMs = 15_000): Promise<StopReport> {
  const report: StopReport = { stopped: [], skipped: [] }
  const record = await readRecord(stateDir)
  if (record) {
    const roles = [
      ...kafkaNodesOf(record).map((n) => ({ role: 'kafka' as const, pid: n.pid })),
      { role: 'registry' as const, pid: record.registryPid },
    ]
    await Promise.all(
      roles.map(async ({ role, pid }) => {
        if (pid > 0 && isOurProcess(pid, role, stateDir)) {
          const how = await terminate(pid, graceMs)
          report.stopped.push({ role, pid, how })
        } else {
          report.skipped.push({ role, pid })
        }
      }),
    )
  }
  if (existsSync(stateDir)) await rm(stateDir, { recursive: true, force: true })
  return report
}

/**
 * Stops stacks under `parentDir` whose owner process is gone: a test runner that
 * was killed (SIGKILL, OOM, closed terminal) never ran its teardown. Stacks with a
 * live owner or without one (`stack:up`) are not touched.
 */
export async function reapOrphanedStacks(parentDir: string, prefix: string): Promise<string[]> {
  const reaped: string[] = []
  const entries = await readdir(parentDir).catch(() => [] as string[])
  for (const name of entries.filter((n) => n.startsWith(prefix))) {
    const dir = path.join(parentDir, name)
    const record = await readRecord(dir)
    if (!record || record.ownerPid === null || isProcessRunning(record.ownerPid)) continue
    await stopRecordedStack(dir)
    reaped.push(dir)
  }
  return reaped
}
