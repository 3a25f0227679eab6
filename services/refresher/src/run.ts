import { startTracing } from '@tep/tracing'
import { enrichmentClientAuth, exitWithConfigProblem, handleHelp, loadConfigOrExit, resolveEnrichmentAuth } from '@tep/config'
import { createEnrichmentClient } from '@tep/enrichment-client'
import { AvroSerde, createKafka, createSchemaRegistry, ensureTopics, topicSpec, TOPICS, schemaRegistrySecurityFromEnv } from '@tep/kafka'
import {
  createContractDriftRecorder,
  createLogger,
  createMetricsRegistry,
  GracefulShutdown,
  Readiness,
  startHealthServer,
} from '@tep/observability'
import { refresherEnv } from './config.ts'
import { RefresherConfigError } from './errors.ts'
import { startRefresher } from './start-refresher.ts'
import { refreshAfter } from './sweep-selection.ts'

const SERVICE = 'refresher'

handleHelp({
  name: SERVICE,
  summary:
    'the single writer of merchant.shops.v1 and merchant.merchants.v1: re-fetches invalidated shops and merchants, ' +
    'writes what ingest fetched on a miss when it is newer, tombstones what the API no longer has, and sweeps entries ' +
    'older than a week when invalidations are off. Re-enrich transactions of invalidated handles with `npm run reenrich -w services/refresher`.',
  env: refresherEnv,
})

const cfg = loadConfigOrExit(SERVICE, refresherEnv, process.env)
const auth = resolveEnrichmentAuth(cfg)
if ('problem' in auth) exitWithConfigProblem(SERVICE, 'ENRICHMENT_CLIENT_ID', auth.problem)
// The sweep settings are checked together (startRefresher would throw the same
// error later), so a bad combination is reported like any other bad variable.
try {
  refreshAfter(cfg.REFRESH_MAX_AGE, cfg.SWEEP_INTERVAL, cfg.SWEEP_MARGIN)
} catch (err) {
  if (!(err instanceof RefresherConfigError)) throw err
  exitWithConfigProblem(SERVICE, 'SWEEP_INTERVAL', err.message)
}

const logger = createLogger({ name: SERVICE, level: cfg.LOG_LEVEL })
const registry = createMetricsRegistry({ service: SERVICE })
const readiness = new Readiness()
// Tolerated deviations of the enrichment API (shop/merchant reads): counted on /metrics, never a readiness failure.
const drift = createContractDriftRecorder({ registry, logger })
const shutdown = new GracefulShutdown({ logger }).install()
// Before any client or pipeline is built: they look for a tracer provider once, when built.
const tracing = startTracing(process.env, {
  serviceName: SERVICE,
  onConfigProblem: (variable, problem) => exitWithConfigProblem(SERVICE, variable, problem),
})
// Registered first, so it runs last: the spans of the final commits are exported.
shutdown.add('tracing', () => tracing.shutdown())

const health = await startHealthServer({ port: cfg.METRICS_PORT, registry, readiness, logger })
shutdown.add('health server', () => health.close())

const kafka = createKafka(
  { brokers: cfg.KAFKA_BROKERS, clientId: SERVICE, logLevel: 'warn' },
  logger,
)
const used = [
  TOPICS.merchantInvalidations,
  TOPICS.merchantFetched,
  TOPICS.merchantShops,
  TOPICS.merchantMerchants,
  TOPICS.transactionsDlq,
  // The re-enrichment of invalidated handles (on by default) reads the enriched topic and writes the raw one.
  ...(cfg.REENRICH_HANDLES ? [TOPICS.transactionsEnriched, TOPICS.transactionsRaw] : []),
]
await ensureTopics(
  kafka,
  used.map((t) => topicSpec(t)),
  { logger },
)

const client = createEnrichmentClient({
  baseUrl: cfg.ENRICHMENT_API_URL,
  ...enrichmentClientAuth(auth),
  logger,
  onContractDrift: drift.listener,
})
shutdown.add('enrichment client', () => client.close())

const refresher = await startRefresher({
  kafka,
  serde: new AvroSerde({ registry: createSchemaRegistry({ url: cfg.SCHEMA_REGISTRY_URL, ...schemaRegistrySecurityFromEnv(), logger }), logger }),
  client,
  invalidationsEnabled: cfg.INVALIDATIONS_ENABLED,
  maxAgeMs: cfg.REFRESH_MAX_AGE,
  sweepIntervalMs: cfg.SWEEP_INTERVAL,
  sweepMarginMs: cfg.SWEEP_MARGIN,
  sweepMaxPerRun: cfg.SWEEP_MAX_PER_RUN,
  fetchConcurrency: cfg.REFRESH_FETCH_CONCURRENCY,
  ...(cfg.REENRICH_HANDLES
    ? {
        reenrichHandles: {
          intervalMs: cfg.REENRICH_INTERVAL,
          maxPerRun: cfg.REENRICH_MAX_PER_RUN,
          enrichedWindowMs: cfg.REENRICH_WINDOW,
        },
      }
    : {}),
  logger,
  registry,
  readiness,
})
shutdown.add('refresher', () => refresher.stop())
logger.info(
  { invalidationsEnabled: cfg.INVALIDATIONS_ENABLED, reenrichHandles: cfg.REENRICH_HANDLES, reenrichWindowMs: cfg.REENRICH_WINDOW },
  'refresher started',
)
