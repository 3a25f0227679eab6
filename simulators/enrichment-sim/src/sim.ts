import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { SimDataset } from '@tep/sim-data'
import { CredentialStore, DEFAULT_CREDENTIALS } from './core/credentials.ts'
import type { CredentialsConfig } from './core/credentials.ts'
import { FaultInjector } from './core/faults.ts'
import { Mutator } from './core/mutations.ts'
import { RateLimiter } from './core/rate-limiter.ts'
import { SimClock } from './core/sim-clock.ts'
import { Stats } from './core/stats.ts'
import { TokenService } from './core/token-service.ts'
import { World } from './core/world.ts'
import { EnrichmentSimConfigError } from './errors.ts'
import { ContractDrift, type DriftOverrides } from './drift/drift-plan.ts'
import { installContractDrift } from './drift/drift-hooks.ts'
import { createApp } from './http/app.ts'
import { INVALIDATION_SHAPES } from './http/context.ts'
import type { InvalidationShape, SimContext } from './http/context.ts'
import { registerAdminRoutes } from './routes/admin.ts'
import { registerEntityRoutes } from './routes/entities.ts'
import { registerInvalidationRoutes } from './routes/invalidations.ts'
import { registerLookupRoutes } from './routes/lookups.ts'
import { registerSuggestionRoute } from './routes/suggestions.ts'
import { registerTokenRoute } from './routes/token.ts'
import { selfSignedCertificate } from './tls.ts'
import { withoutBatchAndComplete } from './http/without-batch-and-complete.ts'
import type { TlsMaterial } from './tls.ts'

export interface EnrichmentSimOptions {
  /** Default 0 (an ephemeral port); the CLI defaults to 8181. */
  port?: number
  /** Default 127.0.0.1. */
  host?: string
  /** Data seed, default 1. Ignored when `dataset` is given. */
  seed?: number | string
  /** Default 50,000. */
  shops?: number
  /** Default 5,000 (or shops / 10 when fewer shops are asked for). */
  merchants?: number
  /** A prebuilt data set (e.g. shared by several simulators in one process). */
  dataset?: SimDataset
  /** Serve HTTPS (TLS 1.2+): true generates a self-signed certificate with openssl. */
  https?: boolean | TlsMaterial
  /** Accepted credentials; default `DEFAULT_CREDENTIALS`. */
  credentials?: CredentialsConfig
  /** Background data changes per minute of real time; default 0 in-process (the CLI defaults to 6). */
  mutationsPerMinute?: number
  /** Requests per second per credential on /v5 (429 beyond); default unlimited. */
  rateLimitPerSecond?: number
  /** Fixed latency added to every API and token request from the start, in ms (e.g. 3 for benchmarks). */
  latencyMs?: number
  /** What each invalidation batch holds; default `full` (`ids-only`: only `ids`, as the description shows). */
  invalidationShape?: InvalidationShape
  /**
   * Answer 404 for the lookups the interface description does not publish (the
   * batch POSTs and the `complete` variants), as a service without them would; default false.
   */
  withoutBatchAndComplete?: boolean
  /** A pino-compatible logger for request logs; default silent. */
  logger?: FastifyBaseLogger
  /**
   * `--contract-drift`: serve every shape the description leaves open (drift/drift-plan.ts),
   * seeded; `overrides` fix dimensions (tests). Off when absent.
   */
  contractDrift?: { seed: string | number; overrides?: DriftOverrides }
}

export interface EnrichmentSim {
  /** Base URL, the part before `/v5` (what ENRICHMENT_API_URL holds). */
  url: string
  tokenUrl: string
  port: number
  host: string
  /** PEM certificate to trust when serving HTTPS. */
  ca?: string
  /** With `contractDrift`: the variants served so far (`dimension=variant`). */
  driftDrawn?: () => string[]
  credentials: CredentialsConfig
  dataset: SimDataset
  close(): Promise<void>
}

/** Starts the enrichment API simulator in this process. */
export async function startEnrichmentSim(options: EnrichmentSimOptions = {}): Promise<EnrichmentSim> {
  const host = options.host ?? '127.0.0.1'
  const port = options.port ?? 0
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new EnrichmentSimConfigError(`port must be an integer from 0 to 65535, got ${port}`)
  const rate = options.mutationsPerMinute ?? 0
  if (!(rate >= 0 && rate <= 60_000)) throw new EnrichmentSimConfigError(`mutationsPerMinute must be from 0 to 60000, got ${rate}`)
  if (options.invalidationShape !== undefined && !INVALIDATION_SHAPES.includes(options.invalidationShape)) throw new EnrichmentSimConfigError(`invalidationShape must be one of ${INVALIDATION_SHAPES.join(', ')}, got ${JSON.stringify(options.invalidationShape)}`)
  if (options.rateLimitPerSecond !== undefined && !(options.rateLimitPerSecond > 0)) throw new EnrichmentSimConfigError(`rateLimitPerSecond must be positive, got ${options.rateLimitPerSecond}`)

  const dataset =
    options.dataset ??
    new SimDataset({
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.shops === undefined ? {} : { shops: options.shops }),
      ...(options.merchants === undefined ? {} : { merchants: options.merchants }),
    })
  const clock = new SimClock()
  const world = new World(dataset, clock)
  const credentials = options.credentials ?? DEFAULT_CREDENTIALS
  const context: SimContext = {
    world,
    mutator: new Mutator(world),
    tokens: new TokenService(clock),
    credentials: new CredentialStore(credentials),
    faults: new FaultInjector(dataset.seed),
    stats: new Stats(),
    clock,
    limiter: options.rateLimitPerSecond === undefined ? undefined : new RateLimiter(options.rateLimitPerSecond),
    suggestions: [],
    invalidationShape: options.invalidationShape ?? 'full',
  }
  const initialFaults = options.latencyMs === undefined || options.latencyMs <= 0 ? {} : { latencyMs: options.latencyMs }
  context.faults.set(initialFaults)

  const tls = options.https === true ? await selfSignedCertificate() : options.https === false ? undefined : options.https
  const app = createApp(context, options.logger, tls === undefined ? undefined : (handler) => createServer({ key: tls.key, cert: tls.cert, minVersion: 'TLSv1.2' }, handler), { ignoreTrailingSlash: options.contractDrift !== undefined })
  const drift = options.contractDrift === undefined ? undefined : new ContractDrift(options.contractDrift.seed, options.contractDrift.overrides, options.logger)
  if (drift !== undefined) installContractDrift(app, drift)
  // Drift includes the lookups the description does not publish: a real service may lack them.
  if (options.withoutBatchAndComplete === true || drift !== undefined) withoutBatchAndComplete(app)
  registerTokenRoute(app, context)
  registerLookupRoutes(app, context)
  registerEntityRoutes(app, context)
  registerInvalidationRoutes(app, context)
  registerSuggestionRoute(app, context)
  registerAdminRoutes(app, context, () => {
    world.reset()
    context.faults.clear()
    context.faults.set(initialFaults)
    context.stats.reset()
    context.limiter?.clear()
    context.suggestions.length = 0
    clock.setOffset(0)
  })

  await app.listen({ port, host })
  const address = app.server.address() as AddressInfo
  const hostInUrl = host.includes(':') ? `[${host}]` : host
  const url = `${tls === undefined ? 'http' : 'https'}://${hostInUrl}:${address.port}`

  const timer = rate > 0 ? setInterval(() => backgroundMutation(app, context), 60_000 / rate) : undefined
  timer?.unref()

  return {
    url,
    tokenUrl: `${url}/auth/protocol/openid-connect/token`,
    port: address.port,
    host,
    ...(tls === undefined ? {} : { ca: tls.cert }),
    ...(drift === undefined ? {} : { driftDrawn: () => drift.drawn() }),
    credentials,
    dataset,
    close: async () => {
      if (timer !== undefined) clearInterval(timer)
      await app.close()
    },
  }
}

function backgroundMutation(app: FastifyInstance, context: SimContext): void {
  try {
    const items = context.mutator.apply({ kind: 'random', count: 1 })
    app.log.debug({ items: items.length, lastId: context.world.log.lastId }, 'background mutation')
  } catch (err) {
    app.log.warn({ err }, 'background mutation failed')
  }
}
