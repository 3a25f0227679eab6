import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'

export interface ProcessSpec {
  name: string
  script: string
  args?: string[]
  env: NodeJS.ProcessEnv
  cwd: string
  logFile: string
  /** URL that answers 200 once the process is up (its /healthz). */
  healthUrl: string
  /**
   * A command node is started under, e.g. `['ip', 'netns', 'exec', '<ns>']` for its
   * own network namespace. It must exec (as `ip netns exec` does), so that the
   * child's pid, which kills and signals hit, is node's.
   */
  commandPrefix?: string[]
}

/**
 * One service or simulator run as its own process, restarted by the harness
 * after a kill -9, and restarted too (counted as an unexpected exit) if it dies
 * on its own: a crash loop shows up in the report instead of stalling the run.
 */
export class SupervisedProcess {
  readonly spec: ProcessSpec
  child: ChildProcess | undefined
  starts = 0
  kills = 0
  unexpectedExits: Array<{ at: string; code: number | null; signal: string | null }> = []
  private readonly log: WriteStream
  private stopping = false
  private expectingExit = false

  constructor(spec: ProcessSpec) {
    this.spec = spec
    this.log = createWriteStream(spec.logFile, { flags: 'a' })
  }

  async start(timeoutMs = 120_000): Promise<void> {
    const [command, ...args] = [...(this.spec.commandPrefix ?? []), process.execPath, this.spec.script, ...(this.spec.args ?? [])]
    const child = spawn(command!, args, { cwd: this.spec.cwd, env: this.spec.env, stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    this.starts++
    child.stdout?.pipe(this.log, { end: false })
    child.stderr?.pipe(this.log, { end: false })
    child.once('exit', (code, signal) => {
      if (this.stopping || this.expectingExit || this.child !== child) return
      this.unexpectedExits.push({ at: new Date().toISOString(), code, signal })
      this.log.write(`\n[faults] ${this.spec.name} exited on its own (code ${code}, signal ${signal}); restarting in 1 s\n`)
      setTimeout(() => void this.start().catch(() => {}), 1_000)
    })
    await this.waitHealthy(child, timeoutMs)
  }

  private async waitHealthy(child: ChildProcess, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${this.spec.name} exited during start-up; see ${this.spec.logFile}`)
      try {
        const res = await fetch(this.spec.healthUrl, { signal: AbortSignal.timeout(2_000) })
        await res.body?.cancel()
        if (res.ok) return
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250))
    }
    throw new Error(`${this.spec.name} did not answer ${this.spec.healthUrl} within ${timeoutMs / 1000} s; see ${this.spec.logFile}`)
  }

  /** kill -9, then start it again and wait until it answers. Returns the milliseconds it was down. */
  async killAndRestart(): Promise<number> {
    const child = this.child
    const at = Date.now()
    if (child && child.exitCode === null && child.signalCode === null) {
      this.expectingExit = true
      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
      this.expectingExit = false
    }
    this.kills++
    this.log.write(`\n[faults] ${this.spec.name} killed with SIGKILL at ${new Date(at).toISOString()}\n`)
    await this.start()
    return Date.now() - at
  }

  async stop(): Promise<void> {
    this.stopping = true
    const child = this.child
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      await exited
      clearTimeout(timer)
    }
    await new Promise<void>((r) => this.log.end(() => r()))
  }
}
