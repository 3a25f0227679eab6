import {
  EnrichmentClient,
  type CardTransactionInput,
  type EnrichmentClientOptions,
} from '@tep/enrichment-client'
import { startEnrichmentSim, type EnrichmentSim, type EnrichmentSimOptions } from '@tep/enrichment-sim'
import { SYSTEM_CLOCK, type HttpClock } from '@tep/http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, request as undiciRequest } from 'undici'

/**
 * Shared pieces of the enrichment client tests: an in-process simulator on an
 * ephemeral port, its admin API, and clients whose clock the test can move in
 * step with the simulator's.
 */

export const OAUTH = { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' } as const
export const LIMITED_OAUTH = {
  type: 'oauth',
  clientId: 'sim-limited',
  clientSecret: 'sim-limited-secret',
} as const
export const BASIC = { type: 'basic', username: 'sim-user', password: 'sim-password' } as const

/** A small data set keeps start-up cheap; behaviour does not depend on its size. */
export async function startSim(options: EnrichmentSimOptions = {}): Promise<EnrichmentSim> {
  return startEnrichmentSim({ seed: 7, shops: 3_000, merchants: 300, ...options })
}

export async function admin<T = Record<string, unknown>>(
  sim: EnrichmentSim,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  // An HTTPS simulator has a self-signed certificate: trust exactly that one.
  const dispatcher = sim.ca === undefined ? undefined : new Agent({ connect: { ca: sim.ca } })
  try {
    const res = await undiciRequest(`${sim.url}${path}`, {
      method: method as 'GET',
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(dispatcher === undefined ? {} : { dispatcher }),
    })
    const text = await res.body.text()
    if (res.statusCode >= 300) throw new Error(`admin ${method} ${path} answered ${res.statusCode}: ${text}`)
    return JSON.parse(text) as T
  } finally {
    await dispatcher?.close()
  }
}

export interface SimStats {
  requests: { total: number; byOperation: Record<string, number>; byStatus: Record<string, number> }
  tokenRequests: number
  lookups: number
  concurrency: { current: number; max: number }
}

export const stats = (sim: EnrichmentSim): Promise<SimStats> => admin<SimStats>(sim, 'GET', '/__admin/stats')
export const resetStats = (sim: EnrichmentSim): Promise<unknown> => admin(sim, 'DELETE', '/__admin/stats')
export const setFaults = (sim: EnrichmentSim, faults: Record<string, unknown>): Promise<unknown> =>
  admin(sim, 'PUT', '/__admin/faults', faults)
export const clearFaults = (sim: EnrichmentSim): Promise<unknown> => admin(sim, 'DELETE', '/__admin/faults')
export const advanceSimClock = (sim: EnrichmentSim, seconds: number): Promise<unknown> =>
  admin(sim, 'POST', '/__admin/clock', { advanceSeconds: seconds })

export interface SampleFound {
  outcome: 'found'
  handle: string
  shopUid: string
  merchantUid: string
}
export type SampleExpectation =
  | SampleFound
  | { outcome: 'notFound'; handle?: string }
  | { outcome: 'invalid'; code: string; parameter?: string }

export interface SimSample {
  kind: 'card' | 'transfer'
  operation:
    | 'findByCardTransaction'
    | 'findByBankTransfer/certis'
    | 'findByBankTransfer/sepa'
    | 'findByBankTransfer/uk'
  input: Record<string, string>
  expected: SampleExpectation
}

export async function samples(
  sim: EnrichmentSim,
  query: {
    count: number
    kind?: 'card' | 'transfer'
    outcome?: 'found' | 'notFound' | 'invalid'
    seed?: number
  },
): Promise<SimSample[]> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))
  return (await admin<{ samples: SimSample[] }>(sim, 'GET', `/__admin/samples?${qs}`)).samples
}

/** The first sample matching `query`; fails clearly when the simulator has none. */
export async function oneSample(
  sim: EnrichmentSim,
  query: Parameters<typeof samples>[1],
): Promise<SimSample> {
  const [sample] = await samples(sim, { ...query, count: 1 })
  if (sample === undefined) throw new Error(`the simulator returned no sample for ${JSON.stringify(query)}`)
  return sample
}

export const cardInput = (sample: SimSample): CardTransactionInput => ({ ...sample.input })

/** A clock the test moves forward, in step with the simulator's, without waiting. */
export interface MovableClock extends HttpClock {
  advance(ms: number): void
}

export function movableClock(): MovableClock {
  let offset = 0
  return {
    now: () => Date.now() + offset,
    sleep: (ms, signal) => SYSTEM_CLOCK.sleep(ms, signal),
    advance: (ms) => {
      offset += ms
    },
  }
}

/** Records the waits the client asks for, and really waits (the simulator counts real time for its limits). */
export function recordingClock(): HttpClock & { sleeps: number[] } {
  const sleeps: number[] = []
  return {
    sleeps,
    now: () => Date.now(),
    sleep: (ms, signal) => {
      sleeps.push(ms)
      return SYSTEM_CLOCK.sleep(ms, signal)
    },
  }
}

/** Records the waits and skips them, for tests about how many attempts happen. */
export function instantClock(): HttpClock & { sleeps: number[] } {
  const sleeps: number[] = []
  return {
    sleeps,
    now: () => Date.now(),
    sleep: async (ms, signal) => {
      signal?.throwIfAborted()
      sleeps.push(ms)
    },
  }
}

export function newClient(
  sim: EnrichmentSim,
  options: Partial<EnrichmentClientOptions> = {},
): EnrichmentClient {
  return new EnrichmentClient({ baseUrl: sim.url, credentials: OAUTH, ...options })
}

export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (err) {
    return err as Error
  }
  throw new Error('expected the call to fail, but it succeeded')
}

export interface RecordedRequest {
  method: string
  /** Path and query exactly as they arrived. */
  url: string
  headers: Record<string, string | string[] | undefined>
  body: string
}

/**
 * A loopback pass-through in front of the simulator that records each request
 * exactly as it came off the wire (raw URL and body), then forwards it unchanged.
 */
export async function startRecordingProxy(
  target: string,
): Promise<{ url: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const requests: RecordedRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: body.toString('utf8'),
      })
      const headers = { ...req.headers }
      delete headers.host
      delete headers.connection
      undiciRequest(`${target}${req.url ?? '/'}`, {
        method: req.method as 'GET',
        headers,
        body: body.length === 0 ? undefined : body,
      })
        .then(async (upstream) => {
          const text = await upstream.body.text()
          res.writeHead(upstream.statusCode, upstream.headers as Record<string, string>)
          res.end(text)
        })
        .catch((err: unknown) => {
          res.writeHead(502, { 'content-type': 'text/plain' })
          res.end(`recording proxy could not reach the simulator: ${String(err)}`)
        })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
