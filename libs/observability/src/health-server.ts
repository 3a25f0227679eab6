import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'
import type { Logger } from 'pino'
import type { Readiness } from './readiness.ts'
import { redactDeep } from './redaction.ts'

export interface HealthServer {
  port: number
  url: string
  close(): Promise<void>
}

/**
 * Limits of the health server: it listens on every interface without authentication, so a
 * slow or idle client (slow-loris: headers a byte at a time) must not hold its sockets for
 * Node's defaults (60 s for headers, 5 min for a request). Probes and scrapes take
 * milliseconds; these leave ample room.
 */
export interface HealthServerTimeouts {
  /** Headers must arrive within this; else 408 and the connection is closed. */
  headersTimeoutMs: number
  /** The whole request (headers and body) within this. */
  requestTimeoutMs: number
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number
  /** Connections at once; beyond, new ones are dropped. */
  maxConnections: number
}

export const DEFAULT_HEALTH_SERVER_TIMEOUTS: HealthServerTimeouts = {
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 64,
}

/**
 * /healthz: the process is alive and its event loop turns (liveness).
 * /readyz: every readiness check holds (200) or not (503), with the reasons.
 * /metrics: Prometheus exposition of the service's registry.
 */
export async function startHealthServer(options: {
  port: number
  host?: string
  registry: Registry
  readiness: Readiness
  logger?: Logger
  timeouts?: Partial<HealthServerTimeouts>
}): Promise<HealthServer> {
  const limits = { ...DEFAULT_HEALTH_SERVER_TIMEOUTS, ...options.timeouts }
  const server: Server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts above on this interval (30 s by default): check often
      // enough that they hold to within a fraction of themselves.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
      maxHeaderSize: 8 * 1024,
    },
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0]
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end()
        return
      }
      if (path === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}')
      } else if (path === '/readyz') {
        // Check details hold error texts (API answer snippets): masked like log lines,
        // since /readyz listens on every interface without authentication.
        const snap = options.readiness.snapshot()
        res
          .writeHead(snap.ready ? 200 : 503, { 'content-type': 'application/json' })
          .end(JSON.stringify(redactDeep(snap)))
      } else if (path === '/metrics') {
        options.registry
          .metrics()
          .then((body) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(body))
          .catch((err: unknown) => {
            options.logger?.error({ err }, 'metrics collection failed')
            res.writeHead(500).end()
          })
      } else {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":"not found: try /healthz, /readyz or /metrics"}')
      }
    },
  )
  server.maxConnections = limits.maxConnections
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  options.logger?.info({ port }, 'health and metrics endpoints listening')
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
