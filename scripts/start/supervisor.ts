import { spawnService, type ChildService } from './child-service.ts'

/** Restart delays: doubled after each exit, capped; back to the first after a stable run. */
export interface RestartPolicy {
  initialDelayMs: number
  maxDelayMs: number
  /** A run this long counts as stable: the next exit waits initialDelayMs again. */
  stableAfterMs: number
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 1_000, maxDelayMs: 30_000, stableAfterMs: 60_000 }

export type SupervisedState = 'running' | 'restarting' | 'stopped'

type SpawnOptions = Parameters<typeof spawnService>[0]

/**
 * One service or simulator kept alive by `npm start`: when its process exits
 * (crash, kill -9, an exit on a fatal error) it is started again, with the same
 * command, environment and ports, after a growing delay. The pipeline is built so
 * that a restarted process resumes from Kafka without losing or duplicating
 * anything; the supervisor only has to bring it back.
 */
export class SupervisedService {
  readonly name: string
  restarts = 0
  state: SupervisedState = 'running'
  /** How the previous process ended, e.g. "signal SIGKILL" or "code 1". */
  lastExit: string | undefined
  current: ChildService
  private delayMs: number
  private startedAt = Date.now()
  private timer: NodeJS.Timeout | undefined
  private stopping = false
  private readonly options: SpawnOptions
  private readonly policy: RestartPolicy
  private readonly onEvent: (line: string) => void

  constructor(options: SpawnOptions, policy: RestartPolicy = DEFAULT_RESTART_POLICY, onEvent: (line: string) => void = () => {}) {
    this.name = options.name
    this.options = options
    this.policy = policy
    this.onEvent = onEvent
    this.delayMs = policy.initialDelayMs
    this.current = this.spawn()
  }

  get logFile(): string {
    return this.current.logFile
  }

  /** The current process's exit (a restart brings a new one). */
  get exited(): Promise<number | null> {
    return this.current.exited
  }

  get pid(): number | undefined {
    return this.current.child.pid
  }

  private spawn(): ChildService {
    this.startedAt = Date.now()
    this.state = 'running'
    const child = spawnService(this.options)
    void child.exited.then(() => this.onExit(child))
    return child
  }

  private onExit(child: ChildService): void {
    if (this.stopping || child !== this.current) return
    const { exitCode, signalCode } = child.child
    this.lastExit = signalCode ? `signal ${signalCode}` : `code ${exitCode}`
    if (Date.now() - this.startedAt >= this.policy.stableAfterMs) this.delayMs = this.policy.initialDelayMs
    const delay = this.delayMs
    this.delayMs = Math.min(this.delayMs * 2, this.policy.maxDelayMs)
    this.state = 'restarting'
    this.onEvent(`${this.name} exited (${this.lastExit}); restarting in ${(delay / 1000).toFixed(1)} s (see ${child.logFile})`)
    this.timer = setTimeout(() => {
      if (this.stopping) return
      this.restarts++
      this.current = this.spawn()
      this.onEvent(`${this.name} restarted (restart #${this.restarts}, pid ${this.current.child.pid})`)
    }, delay)
  }

  async stop(): Promise<void> {
    this.stopping = true
    clearTimeout(this.timer)
    await this.current.stop()
    this.state = 'stopped'
  }
}
