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
import { pollerEnv } from './config.ts'
import { enrichmentFeed } from './enrichment-feed.ts'
import { startInvalidationPoller } from './start-invalidation-poller.ts'

const SERVICE = 'invalidation-poller'

handleHelp({
  name: SERVICE,
  summary:
    'follows the enrichment /v5/invalidations feed page by page and publishes every item to merchant.invalidations.v1, ' +
    'committing its cursor in the same Kafka transaction. Run exactly one instance per feed: a second one fences the first.',
  env: pollerEnv,
})

const cfg = loadConfigOrExit(SERVICE, pollerEnv, process.env)
const auth = resolveEnrichmentAuth(cfg)
if ('problem' in auth) exitWithConfigProblem(SERVICE, 'ENRICHMENT_CLIENT_ID', auth.problem)

const logger = createLogger({ name: SERVICE, level: cfg.LOG_LEVEL })
const registry = createMetricsRegistry({ service: SERVICE })
const readiness = new Readiness()
// Tolerated deviations of the enrichment API: counted on /metrics, one warning each; never a readiness failure.
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
await ensureTopics(
  kafka,
  [topicSpec(TOPICS.merchantInvalidations), topicSpec(TOPICS.merchantInvalidationsCursor)],
  { logger },
)

const client = createEnrichmentClient({
  baseUrl: cfg.ENRICHMENT_API_URL,
  ...enrichmentClientAuth(auth),
  logger,
  onContractDrift: drift.listener,
})
shutdown.add('enrichment client', () => client.close())

const poller = await startInvalidationPoller({
  kafka,
  serde: new AvroSerde({ registry: createSchemaRegistry({ url: cfg.SCHEMA_REGISTRY_URL, ...schemaRegistrySecurityFromEnv(), logger }), logger }),
  feed: enrichmentFeed(client),
  levels: cfg.INVALIDATIONS_LEVELS,
  pageSize: cfg.INVALIDATIONS_PAGE_SIZE,
  pollIntervalMs: cfg.INVALIDATIONS_POLL_INTERVAL,
  startAt: cfg.INVALIDATIONS_START_AT,
  ...(cfg.INVALIDATIONS_START_ID === undefined ? {} : { startId: cfg.INVALIDATIONS_START_ID }),
  onContractDrift: drift.listener,
  feedBase: cfg.INVALIDATIONS_FEED_NAME,
  logger,
  registry,
  readiness,
})
shutdown.add('poller', () => poller.stop())
logger.info(
  {
    feed: poller.feed,
    transactionalId: poller.transactionalId,
    pollIntervalMs: cfg.INVALIDATIONS_POLL_INTERVAL,
  },
  'invalidation poller started',
)

poller.done.catch((err: unknown) => {
  logger.error({ err }, 'invalidation poller stopped')
  void shutdown.shutdown().finally(() => process.exit(1))
})
