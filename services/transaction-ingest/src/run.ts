import { startTracing } from '@tep/tracing'
import { hostname } from 'node:os'
import { ConfigError, exitWithConfigProblem, handleHelp, loadConfig, resolveEnrichmentAuth } from '@tep/config'
import { createEnrichmentClient } from '@tep/enrichment-client'
import { createKafka, createSchemaRegistry, ensureTopics, TOPIC_CATALOG, schemaRegistrySecurityFromEnv } from '@tep/kafka'
import {
  createContractDriftRecorder,
  createLogger,
  createMetricsRegistry,
  GracefulShutdown,
  Readiness,
  startHealthServer,
} from '@tep/observability'
import { INGEST_ENV } from './config.ts'
import { defaultConcurrency } from './inflight-budget.ts'
import { CONSUMER_CHECK, startTransactionIngest } from './transaction-ingest.ts'

const SERVICE = 'transaction-ingest'

handleHelp({
  name: SERVICE,
  summary:
    'enriches every raw transaction of transactions.raw.v1 exactly once: one findBy lookup per record (single or micro-batched), ' +
    'shop and merchant details from a local table fed by merchant.shops.v1/merchant.merchants.v1 (API on a miss), ' +
    'results to transactions.enriched.v1 and undecodable records to transactions.dlq.v1 in one Kafka transaction with the offsets.',
  env: INGEST_ENV,
})

let cfg
try {
  cfg = loadConfig(SERVICE, INGEST_ENV)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  process.stderr.write(`${err.message}\n`)
  process.exit(2)
}
const auth = resolveEnrichmentAuth(cfg)
if ('problem' in auth) {
  process.stderr.write(
    `invalid configuration for ${SERVICE}: ${auth.problem}\nRun with --help to see every variable.\n`,
  )
  process.exit(2)
}

const instanceId = cfg.INGEST_INSTANCE_ID ?? `${hostname()}-${process.pid}`
const logger = createLogger({ name: SERVICE, level: cfg.LOG_LEVEL, base: { instance: instanceId } })
const metricsRegistry = createMetricsRegistry({ service: SERVICE })
const readiness = new Readiness()
// Not ready while topics and clients are set up (before startTransactionIngest registers its checks).
readiness.register(CONSUMER_CHECK, 'starting: creating topics and clients')
const shutdown = new GracefulShutdown({ logger }).install()
// Before any client or pipeline is built: they look for a tracer provider once, when built.
const tracing = startTracing(process.env, {
  serviceName: SERVICE,
  onConfigProblem: (variable, problem) => exitWithConfigProblem(SERVICE, variable, problem),
})
// Registered first, so it runs last: the spans of the final commits are exported.
shutdown.add('tracing', () => tracing.shutdown())

const health = await startHealthServer({
  port: cfg.METRICS_PORT,
  registry: metricsRegistry,
  readiness,
  logger,
})
shutdown.add('health server', () => health.close())

const kafka = createKafka(
  { brokers: cfg.KAFKA_BROKERS, clientId: `${SERVICE}-${instanceId}` },
  logger,
)
const topics = {
  input: cfg.INGEST_INPUT_TOPIC,
  enriched: cfg.INGEST_ENRICHED_TOPIC,
  dlq: cfg.INGEST_DLQ_TOPIC,
  fetched: cfg.INGEST_FETCHED_TOPIC,
  shops: cfg.INGEST_SHOPS_TOPIC,
  merchants: cfg.INGEST_MERCHANTS_TOPIC,
}
// Topics named as in the catalog are created (or checked) here; renamed ones
// (tests, side-by-side deployments) must exist already.
const catalogTopics = TOPIC_CATALOG.filter((t) => (Object.values(topics) as string[]).includes(t.name))
if (catalogTopics.length > 0) {
  await ensureTopics(kafka, catalogTopics, { logger })
}

// Answers of the enrichment API that differ from what the client expected and were
// tolerated: counted on this /metrics (tep_api_contract_drift_total), one warning each.
const contractDrift = createContractDriftRecorder({ registry: metricsRegistry, logger })
const client = createEnrichmentClient({
  baseUrl: cfg.ENRICHMENT_API_URL,
  ...(auth.kind === 'oauth' ? { tokenUrl: auth.tokenUrl } : {}),
  credentials:
    auth.kind === 'oauth'
      ? { type: 'oauth', clientId: auth.clientId, clientSecret: auth.clientSecret }
      : { type: 'basic', username: auth.user, password: auth.password },
  limits: { maxConcurrent: cfg.INGEST_API_MAX_CONCURRENT },
  retry: { retries: cfg.INGEST_API_RETRIES },
  timeouts: { headersMs: cfg.INGEST_API_TIMEOUT, bodyMs: cfg.INGEST_API_TIMEOUT },
  logger,
  onContractDrift: contractDrift.listener,
})
shutdown.add('enrichment client', () => client.close())

const ingest = await startTransactionIngest({
  kafka,
  schemaRegistry: createSchemaRegistry({ url: cfg.SCHEMA_REGISTRY_URL, ...schemaRegistrySecurityFromEnv(), logger }),
  client,
  topics,
  lookupMode: cfg.INGEST_LOOKUP_MODE,
  completeLookups: cfg.INGEST_COMPLETE_LOOKUPS,
  batchMax: cfg.INGEST_BATCH_MAX,
  batchLingerMs: cfg.INGEST_BATCH_LINGER,
  lookupReprobeMs: cfg.INGEST_LOOKUP_REPROBE_INTERVAL,
  onContractDrift: contractDrift.listener,
  concurrency: cfg.INGEST_CONCURRENCY ?? defaultConcurrency(cfg.INGEST_LOOKUP_MODE, cfg.INGEST_API_MAX_CONCURRENT),
  partitionsConcurrently: cfg.INGEST_PARTITIONS_CONCURRENTLY,
  maxRecordsPerTransaction: cfg.INGEST_MAX_RECORDS_PER_TRANSACTION,
  invalidationsEnabled: cfg.INVALIDATIONS_ENABLED,
  groupId: cfg.INGEST_GROUP_ID,
  transactionalIdPrefix: cfg.INGEST_TRANSACTIONAL_ID_PREFIX,
  instanceId,
  // The bulk load runs in a child process so that its garbage is not kept by
  // this process (ARCHITECTURE §8: 1M shops under 300 MB RSS, started plainly).
  tableLoader: {
    brokers: cfg.KAFKA_BROKERS,
    clientId: `${SERVICE}-${instanceId}`,
    registryUrl: cfg.SCHEMA_REGISTRY_URL,
    transcode: cfg.INGEST_TABLE_TRANSCODE,
    ...(cfg.INGEST_TABLE_LOADERS === undefined ? {} : { processes: cfg.INGEST_TABLE_LOADERS }),
  },
  tableTranscode: cfg.INGEST_TABLE_TRANSCODE,
  ...(cfg.INGEST_STATE_DIR === undefined
    ? {}
    : {
        tableCheckpoint: {
          dir: cfg.INGEST_STATE_DIR,
          intervalMs: cfg.INGEST_STATE_INTERVAL,
          maxAgeMs: cfg.INGEST_STATE_MAX_AGE,
        },
      }),
  consumer: {
    sessionTimeout: cfg.INGEST_SESSION_TIMEOUT,
    heartbeatInterval: Math.max(500, Math.floor(cfg.INGEST_SESSION_TIMEOUT / 10)),
  },
  logger,
  metricsRegistry,
  readiness,
  onFatal: (err) => {
    // Staying alive and idle would never be noticed by a supervisor: end, so that it starts a new instance.
    logger.fatal({ err }, 'the exactly-once pipeline stopped for good; exiting so that the supervisor restarts the instance')
    void shutdown.shutdown().finally(() => process.exit(70))
  },
})
shutdown.add('transaction-ingest', () => ingest.stop())
logger.info(
  {
    topics,
    lookupMode: cfg.INGEST_LOOKUP_MODE,
    shops: ingest.tables.shops.size,
    merchants: ingest.tables.merchants.size,
    metricsPort: health.port,
  },
  'transaction-ingest running',
)
