import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CHILD_STOP_GRACE_MS } from './stop-grace.ts'

/** Stops the child when this process is gone (exit-with-parent.ts). */
const EXIT_WITH_PARENT = fileURLToPath(new URL('./exit-with-parent.ts', import.meta.url))

export interface ChildService {
  name: string
  logFile: string
  child: ChildProcess
  /** Resolves with the exit code when the process ends, for whatever reason. */
  exited: Promise<number | null>
  stop(): Promise<void>
}

/**
 * Runs one service or simulator as its own process (as in production: separate
 * event loops, separate failure domains), its output in a log file so the
 * terminal stays free for the live view. It stops when this process dies, for
 * whatever reason (exit-with-parent.ts).
 */
export function spawnService(options: { name: string; script: string; args?: string[]; env: NodeJS.ProcessEnv; logDir: string; cwd: string }): ChildService {
  const logFile = path.join(options.logDir, `${options.name}.log`)
  // The log file itself is the child's stdout and stderr (not a pipe through this process):
  // an orphan's shutdown lines still reach it after this process is gone.
  const log = openSync(logFile, 'a')
  // The IPC channel is only a lifeline: when this process dies, however, the child sees it close.
  // Its own process group: Ctrl-C in the terminal reaches `npm start` alone, which stops each
  // child once (a second signal would make a service skip its shutdown steps).
  const child = spawn(process.execPath, ['--import', EXIT_WITH_PARENT, options.script, ...(options.args ?? [])], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', log, log, 'ipc'],
    detached: true,
  })
  closeSync(log)
  child.channel?.unref()
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return {
    name: options.name,
    logFile,
    child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_STOP_GRACE_MS)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Waits until `url` answers 200, or throws naming the service and its log file. */
export async function waitForHttp(url: string, service: Pick<ChildService, 'name' | 'logFile' | 'exited'>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let exitCode: number | null | undefined
  void service.exited.then((code) => (exitCode = code))
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`${service.name} exited with code ${exitCode} during start-up; see ${service.logFile}`)
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      if (res.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`${service.name} did not answer ${url} within ${timeoutMs / 1000} s; see ${service.logFile}`)
}
