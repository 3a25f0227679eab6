import type { Logger } from 'pino'
import { ShutdownIncompleteError } from './errors.ts'

export interface ShutdownOptions {
  logger: Logger
  /** Hard limit for the whole shutdown; past it the process exits 1. */
  timeoutMs?: number
  signals?: NodeJS.Signals[]
  exit?: (code: number) => void
}

/**
 * Runs the registered stop steps once, in reverse registration order (the last
 * thing started is the first stopped: consumers before producers before the
 * health server), on SIGTERM/SIGINT. A second signal or the timeout forces exit.
 */
export class GracefulShutdown {
  private readonly steps: { name: string; run: () => Promise<void> }[] = []
  private running: Promise<void> | undefined
  private readonly options: Required<Omit<ShutdownOptions, 'logger'>> & { logger: Logger }

  constructor(options: ShutdownOptions) {
    this.options = { timeoutMs: 30_000, signals: ['SIGTERM', 'SIGINT'], exit: (c) => process.exit(c), ...options }
  }

  add(name: string, run: () => Promise<void>): this {
    this.steps.push({ name, run })
    return this
  }

  install(): this {
    for (const signal of this.options.signals) {
      process.on(signal, () => {
        if (this.running) {
          this.options.logger.warn({ signal }, 'second signal: exiting now')
          this.options.exit(1)
          return
        }
        this.options.logger.info({ signal }, 'shutting down')
        void this.shutdown().then(
          () => this.options.exit(0),
          () => this.options.exit(1),
        )
      })
    }
    return this
  }

  shutdown(): Promise<void> {
    this.running ??= this.runSteps()
    return this.running
  }

  private async runSteps(): Promise<void> {
    const timer = setTimeout(() => {
      this.options.logger.error({ timeoutMs: this.options.timeoutMs }, 'shutdown timed out')
      this.options.exit(1)
    }, this.options.timeoutMs)
    timer.unref()
    const failed: string[] = []
    for (const step of [...this.steps].reverse()) {
      try {
        await step.run()
        this.options.logger.debug({ step: step.name }, 'stopped')
      } catch (err) {
        failed.push(step.name)
        this.options.logger.error({ err, step: step.name }, 'stop step failed')
      }
    }
    clearTimeout(timer)
    if (failed.length > 0) throw new ShutdownIncompleteError(failed)
  }
}
