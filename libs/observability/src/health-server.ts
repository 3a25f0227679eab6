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
}): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
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
      res.writeHead(snap.ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(redactDeep(snap)))
    } else if (path === '/metrics') {
      options.registry
        .metrics()
        .then((body) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(body))
        .catch((err: unknown) => {
          options.logger?.error({ err }, 'metrics collection failed')
          res.writeHead(500).end()
        })
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found: try /healthz, /readyz or /metrics"}')
    }
  })
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
