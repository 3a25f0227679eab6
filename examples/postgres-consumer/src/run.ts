import { parseArgs } from 'node:util'
import { ConfigError, envVar, formatEnvHelp, kafkaVars, loadConfig, parse } from '@tep/config'
import { createKafka, createSchemaRegistry, TOPICS } from '@tep/kafka'
import { createLogger } from '@tep/observability'
import pg from 'pg'
import { createPostgresMaterializer, resetOffsets } from './postgres-materializer.ts'

const ENV = {
  ...kafkaVars,
  DATABASE_URL: envVar(parse.nonEmpty, 'PostgreSQL connection string, e.g. postgres://user@127.0.0.1:5432/db', {
    default: 'postgres://postgres@127.0.0.1:5432/postgres',
    secret: true,
  }),
  PG_CONSUMER_NAME: envVar(parse.nonEmpty, 'name of this materialisation: key of its offsets in the database and its Kafka group id', {
    default: 'postgres-consumer',
  }),
  PG_CONSUMER_TOPIC: envVar(parse.nonEmpty, 'topic to materialise', { default: TOPICS.transactionsEnriched }),
  PG_CONSUMER_SESSION_TIMEOUT: envVar(parse.duration, 'Kafka consumer session timeout: how long a crashed instance keeps its partitions', {
    default: '30s',
  }),
  LOG_LEVEL: envVar(parse.nonEmpty, 'pino log level', { default: 'info' }),
}

const HELP = `Usage: npm start -w @tep/postgres-consumer [-- --replay]

Reference downstream consumer: materialises enriched transactions into the
PostgreSQL table enriched_transactions (one row per transactionId, the latest
enrichment), exactly once: rows and the consumer's offsets are written in one
database transaction, and a start seeks to the offsets the database holds.

  --replay    forget the stored offsets first and read the topic from the beginning
              (the table is kept; it ends equal to the topic's latest state)
  -h, --help  this text

Environment:
${formatEnvHelp(ENV)}`

const { values } = parseArgs({
  options: { replay: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
})
if (values.help) {
  process.stdout.write(`${HELP}\n`)
  process.exit(0)
}
let cfg
try {
  cfg = loadConfig('postgres-consumer', ENV)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  process.stderr.write(`${err.message}\n`)
  process.exit(2)
}
const logger = createLogger({ name: 'postgres-consumer', level: cfg.LOG_LEVEL as 'info' })
const pool = new pg.Pool({ connectionString: cfg.DATABASE_URL, max: 4 })
if (values.replay) await resetOffsets(pool, cfg.PG_CONSUMER_NAME, cfg.PG_CONSUMER_TOPIC)
const materializer = createPostgresMaterializer({
  kafka: createKafka({ brokers: cfg.KAFKA_BROKERS, clientId: cfg.PG_CONSUMER_NAME, logLevel: 'warn' }, logger),
  schemaRegistry: createSchemaRegistry({ url: cfg.SCHEMA_REGISTRY_URL }),
  pool,
  topic: cfg.PG_CONSUMER_TOPIC,
  consumerName: cfg.PG_CONSUMER_NAME,
  consumer: {
    sessionTimeout: cfg.PG_CONSUMER_SESSION_TIMEOUT,
    heartbeatInterval: Math.max(500, Math.floor(cfg.PG_CONSUMER_SESSION_TIMEOUT / 10)),
  },
  logger,
  onCommitted: (e) => logger.debug(e, 'batch committed to PostgreSQL'),
})
await materializer.start()
logger.info({ topic: cfg.PG_CONSUMER_TOPIC, consumer: cfg.PG_CONSUMER_NAME, replay: values.replay }, 'postgres-consumer running')
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    void materializer
      .stop()
      .then(() => pool.end())
      .finally(() => process.exit(0))
  })
