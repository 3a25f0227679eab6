import { startTracing } from '@tep/tracing'
import { ConfigError, exitWithConfigProblem, handleHelp, loadConfig } from '@tep/config'
import { AvroSerde, createKafka, createSchemaRegistry, ensureTopics, topicSpec, TOPICS, schemaRegistrySecurityFromEnv } from '@tep/kafka'
import {
  createLogger,
  createMetricsRegistry,
  GracefulShutdown,
  Readiness,
  startHealthServer,
} from '@tep/observability'
import { bankSyncEnv, resolveBankClient, resolveCustomerTokenKey, resolveKeyring, resolvePkce } from './config.ts'
import { BankSyncConfigError } from './errors.ts'
import { startBankSync } from './start-bank-sync.ts'

const SERVICE = 'bank-sync'

handleHelp({
  name: SERVICE,
  summary:
    'consent gateway and bank sync: starts the bank OAuth consent flow, records consents (tokens encrypted) in bank.consents.v1, ' +
    'and for every consent of its partitions pulls new bank transactions into bank.transactions.v1 and transactions.raw.v1 ' +
    '(one Kafka transaction per sync). Run several instances in one group to share consents by partition.',
  env: bankSyncEnv,
})

let cfg
let keys
let customerKey
let bankClient
let pkce
try {
  const loaded = loadConfig(SERVICE, bankSyncEnv)
  cfg = loaded
  // Every refusal at once: an operator fixes the configuration in one go.
  const problems: string[] = []
  const attempt = <T>(resolve: () => T): T | undefined => {
    try {
      return resolve()
    } catch (err) {
      if (!(err instanceof BankSyncConfigError)) throw err
      problems.push(err.message)
      return undefined
    }
  }
  keys = attempt(() => resolveKeyring(loaded))
  customerKey = attempt(() => resolveCustomerTokenKey(loaded))
  bankClient = attempt(() => resolveBankClient(loaded))
  pkce = attempt(() => resolvePkce(loaded, process.env))
  if (keys === undefined || customerKey === undefined || bankClient === undefined || pkce === undefined)
    throw new BankSyncConfigError(problems.join('\n'))
} catch (err) {
  if (
    !(err instanceof ConfigError) &&
    !(err instanceof BankSyncConfigError) &&
    !(err instanceof Error && 'code' in err)
  )
    throw err
  process.stderr.write(`${(err as Error).message}\nRun with --help to see every variable.\n`)
  process.exit(2)
}

const logger = createLogger({ name: SERVICE, level: cfg.LOG_LEVEL })
if (keys.development) {
  logger.warn(
    { keyId: 'dev-insecure' },
    'TOKEN_ENCRYPTION_KEY is not set: using the fixed, public DEVELOPMENT key (BANK_SYNC_DEVELOPMENT_KEYS=true); never use this against a real bank',
  )
}
if (customerKey.development) {
  logger.warn(
    'CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY is not set: customer tokens are checked with the fixed, public DEVELOPMENT key (BANK_SYNC_DEVELOPMENT_KEYS=true); anyone can mint them',
  )
}
if (bankClient.development) {
  logger.warn(
    { clientId: bankClient.clientId, redirectUri: bankClient.redirectUri },
    "BANK_CLIENT_ID, BANK_CLIENT_SECRET or BANK_REDIRECT_URI not set: using the loopback simulator's client (BANK_SYNC_DEVELOPMENT_KEYS=true)",
  )
}
if (pkce.insecure) {
  logger.warn('INSECURE bank setting accepted (KAFKA_ALLOW_INSECURE=true): BANK_PKCE=off, authorization codes are not bound to this instance by PKCE')
}
const registry = createMetricsRegistry({ service: SERVICE })
const readiness = new Readiness()
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
// Same partitions and cleanup as the catalog topic, under the configured name.
const as = (name: string, catalog: Parameters<typeof topicSpec>[0]) => ({ ...topicSpec(catalog), name })
await ensureTopics(
  kafka,
  [
    as(cfg.BANK_CONSENTS_TOPIC, TOPICS.bankConsents),
    as(cfg.BANK_TRANSACTIONS_TOPIC, TOPICS.bankTransactions),
    as(cfg.BANK_RAW_TOPIC, TOPICS.transactionsRaw),
  ],
  { logger },
)

const sync = await startBankSync({
  kafka,
  serde: new AvroSerde({ registry: createSchemaRegistry({ url: cfg.SCHEMA_REGISTRY_URL, ...schemaRegistrySecurityFromEnv(), logger }), logger }),
  bank: {
    baseUrl: cfg.BANK_API_URL,
    clientId: bankClient.clientId,
    clientSecret: bankClient.clientSecret,
    redirectUri: bankClient.redirectUri,
  },
  keyring: keys.keyring,
  topics: {
    consents: cfg.BANK_CONSENTS_TOPIC,
    bankTransactions: cfg.BANK_TRANSACTIONS_TOPIC,
    raw: cfg.BANK_RAW_TOPIC,
  },
  groupId: cfg.BANK_SYNC_GROUP_ID,
  ...(cfg.BANK_SYNC_INSTANCE_ID === undefined ? {} : { groupInstanceId: cfg.BANK_SYNC_INSTANCE_ID }),
  transactionalIdPrefix: cfg.BANK_SYNC_TRANSACTIONAL_ID_PREFIX,
  gateway: {
    port: cfg.CONSENT_GATEWAY_PORT,
    host: cfg.CONSENT_GATEWAY_HOST,
    customerTokenKey: customerKey.key,
    customerTokenAudience: cfg.CONSENT_GATEWAY_TOKEN_AUDIENCE,
    ...(cfg.CONSENT_GATEWAY_TOKEN_ISSUER === undefined ? {} : { customerTokenIssuer: cfg.CONSENT_GATEWAY_TOKEN_ISSUER }),
    customerTokenMaxLifetimeMs: cfg.CONSENT_GATEWAY_TOKEN_MAX_LIFETIME,
    callbackBudget: {
      maxConcurrent: cfg.CONSENT_GATEWAY_CALLBACK_CONCURRENCY,
      maxQueued: cfg.CONSENT_GATEWAY_CALLBACK_QUEUE,
    },
    pkce: pkce.pkce,
    limits: {
      requestTimeoutMs: cfg.CONSENT_GATEWAY_REQUEST_TIMEOUT,
      maxConnections: cfg.CONSENT_GATEWAY_MAX_CONNECTIONS,
      perCustomer: { max: cfg.CONSENT_GATEWAY_CUSTOMER_LIMIT, windowMs: 10 * 60_000 },
    },
  },
  replicas: cfg.BANK_SYNC_REPLICAS,
  sync: {
    overlapDays: cfg.BANK_OVERLAP_DAYS,
    pageSize: cfg.BANK_PAGE_SIZE,
    backfillDays: cfg.BANK_BACKFILL_DAYS,
    expiryWarningMs: cfg.CONSENT_EXPIRY_WARNING,
  },
  schedule: { intervalMs: cfg.SYNC_INTERVAL, jitterMs: cfg.SYNC_JITTER, concurrency: cfg.SYNC_CONCURRENCY },
  logger,
  metricsRegistry: registry,
  readiness,
})
shutdown.add('bank sync', () => sync.stop())
logger.info(
  { gateway: sync.gatewayUrl, groupId: cfg.BANK_SYNC_GROUP_ID, groupInstanceId: cfg.BANK_SYNC_INSTANCE_ID ?? null },
  'bank-sync started',
)
