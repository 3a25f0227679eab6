import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'
import type { HttpClientOptions, HttpClock } from '../client-options.ts'
import { HttpClient } from '../http-client.ts'

/*
 * What the HttpClient tests share: loopback servers that record what they saw,
 * a fake clock, and cleanups run after each test of the file that imports this.
 */

export interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen, index: number) => void

export const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  const { port } = server.address() as AddressInfo
  return `127.0.0.1:${port}`
}

/** A loopback server answering with `handlers[i]` for the i-th request (the last one repeats). */
export async function startServer(...handlers: Handler[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      seen.push(entry)
      const index = seen.length - 1
      handlers[Math.min(index, handlers.length - 1)]!(req, res, entry, index)
    })
  })
  return { url: `http://${await listen(server)}`, seen }
}

export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }

/** Records the waits instead of sleeping, so retry tests need no real time. */
export function fakeClock(nowMs = Date.parse('2026-01-01T00:00:00Z')): HttpClock & { sleeps: number[] } {
  const sleeps: number[] = []
  return {
    sleeps,
    now: () => nowMs,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted()
      sleeps.push(ms)
    },
  }
}

export function client(options: HttpClientOptions): HttpClient {
  const c = new HttpClient(options)
  cleanups.push(() => c.close())
  return c
}

export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (err) {
    return err as Error
  }
  throw new Error('expected the promise to reject')
}

/** A port with nothing listening: bind one, then close it. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
