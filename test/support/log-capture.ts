import { Writable } from 'node:stream'

export interface LogCapture {
  /** A pino destination: each line written is kept, the oldest dropped past `limit`. */
  destination: Writable
  /** The last `n` lines, oldest first, for an error message. */
  tail(n?: number): string
}

/**
 * Keeps the last log lines of the services a test runs in memory. Tests log
 * nothing to the console (it drowns the suite's output), so without this a
 * step that hangs in CI leaves no trace of what the service was waiting for;
 * with it, the timeout's message carries the service's own account.
 */
export function captureLog(limit = 500): LogCapture {
  const lines: string[] = []
  let partial = ''
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const text = partial + chunk.toString()
      const parts = text.split('\n')
      partial = parts.pop() ?? ''
      for (const line of parts) {
        lines.push(line)
        if (lines.length > limit) lines.shift()
      }
      done()
    },
  })
  return {
    destination,
    tail: (n = 40) => lines.slice(-n).join('\n'),
  }
}
