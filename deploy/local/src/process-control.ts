import { execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'

/**
 * True when `pid` names a live process. A zombie counts as dead: on machines whose
 * init does not reap (containers, micro-VMs) a killed daemon can linger as `Z`,
 * and `kill(pid, 0)` alone would call it alive forever.
 */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Field 3 follows the parenthesised command name, which may itself contain spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return true // no /proc (macOS): kill(pid, 0) succeeded, trust it
  }
}

/** The command line of `pid` as one space-joined string, or undefined when unknown or gone. */
export function processCommandLine(pid: number): string | undefined {
  if (existsSync('/proc/self/cmdline')) {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
    } catch {
      return undefined
    }
  }
  // No procfs (macOS, BSD): ask ps; -ww so a long java command line is not cut off before the marker.
  try {
    const out = execFileSync('ps', ['-ww', '-o', 'command=', '-p', String(pid)], { encoding: 'utf8' }).trim()
    return out === '' ? undefined : out
  } catch {
    return undefined
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}

/**
 * Waits until `pid` is gone. Polling is the only option for a process that is not
 * our child (a detached daemon started by an earlier `stack:up`).
 */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (isProcessRunning(pid)) {
    if (Date.now() >= deadline) return false
    await delay(100)
  }
  return true
}

/**
 * SIGTERM (a JVM runs its shutdown hooks: Kafka does a controlled shutdown), wait up
 * to `graceMs`, then SIGKILL. Resolves once the process is gone. Never throws for
 * a process that already exited.
 */
export async function terminate(pid: number, graceMs = 15_000): Promise<'exited' | 'terminated' | 'killed'> {
  if (!isProcessRunning(pid)) return 'exited'
  // No grace (a throwaway stack): straight to SIGKILL, no controlled shutdown begun for nothing.
  if (graceMs > 0) {
    try {
      process.kill(pid, 'SIGTERM')
    } catch {
      return 'exited'
    }
    if (await waitForExit(pid, graceMs)) return 'terminated'
  }
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    return 'terminated'
  }
  await waitForExit(pid, 5_000)
  return 'killed'
}

/**
 * Like `terminate`, but awaits the child's own exit event (no polling) for our children.
 * `graceMs` 0: SIGKILL at once, no shutdown hooks, for a child whose state is thrown away.
 */
export async function terminateChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  if (graceMs <= 0) {
    child.kill('SIGKILL')
    return exited
  }
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  try {
    await exited
  } finally {
    clearTimeout(timer)
  }
}
