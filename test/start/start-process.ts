import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** The parts of a `npm start -- --no-ui` JSON line the tests read (scripts/start/status-report.ts). */
export interface StatusLine {
  time: string
  counts: Record<string, number>
  outcomes: Record<string, number>
  consumerLag: Record<string, number>
  endToEndLatencySeconds: { p50: number; p99: number } | null
  services: Record<string, { state: string; ready: boolean | null; restarts: number; pid: number | null; lastExit: string | null }>
}

/**
 * `node scripts/start.ts --no-ui` against the test stack, with its JSON lines
 * parsed as they come; `next(predicate)` resolves with the first later line that
 * satisfies it (no sleeps: each line is an event).
 */
export class StartProcess {
  readonly child: ChildProcess
  output = ''
  last: StatusLine | undefined
  private waiters: Array<{ test: (s: StatusLine) => boolean; resolve: (s: StatusLine) => void }> = []
  readonly exited: Promise<number | null>

  constructor(args: string[]) {
    this.child = spawn(process.execPath, ['scripts/start.ts', '--no-ui', ...args], {
      cwd: repoRoot,
      env: { ...process.env, KAFKA_BROKERS: inject('kafkaBrokers').join(','), SCHEMA_REGISTRY_URL: inject('registryUrl'), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()))
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.output += `${line}\n`
      if (this.output.length > 200_000) this.output = this.output.slice(-100_000)
      let parsed: unknown
      try {
        parsed = JSON.parse(line)
      } catch {
        throw new Error(`--no-ui printed a line that is not JSON: ${line}`)
      }
      if (typeof parsed !== 'object' || parsed === null || !('services' in parsed)) return // supervisor events
      this.last = parsed as StatusLine
      this.waiters = this.waiters.filter((w) => {
        if (!w.test(this.last!)) return true
        w.resolve(this.last!)
        return false
      })
    })
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)))
  }

  next(test: (s: StatusLine) => boolean, what: string): Promise<StatusLine> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ test, resolve })
      void this.exited.then((code) => reject(new Error(`npm start exited (${code}) while waiting for ${what}:\n${this.output.slice(-3000)}`)))
    })
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM')
    return this.exited
  }
}
