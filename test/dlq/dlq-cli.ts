/**
 * `npm run dlq` as an operator runs it, on a test's topics: the CLI in its own
 * process, its exit code, stdout (one JSON document with --json) and stderr.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../tools/dlq/src/main.ts')

export interface DlqRun {
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as JSON (throws with the output when it is not). */
  json<T = Record<string, unknown>>(): T
}

export interface DlqCliTopics {
  dlq: string
  audit: string
}

export function runDlq(topics: DlqCliTopics, args: string[]): Promise<DlqRun> {
  // The test's stack and topics first: options given in `args` come later and win.
  const argv = [MAIN, '--brokers', inject('kafkaBrokers').join(','), '--registry', inject('registryUrl'), '--dlq-topic', topics.dlq, '--audit-topic', topics.audit, ...args]
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1
      resolve({
        code,
        stdout,
        stderr,
        json<T>() {
          try {
            return JSON.parse(stdout) as T
          } catch {
            throw new Error(`dlq ${args.join(' ')} exited ${code} without JSON on stdout:\n${stdout}\nstderr:\n${stderr}`)
          }
        },
      })
    })
  })
}
