import { parseArgs } from 'node:util'
import { ConfigError, formatEnvHelp, kafkaVars, loadConfig, observabilityVars, parse } from '@tep/config'
import { AvroSerde, createKafka, createSchemaRegistry, schemaRegistrySecurityFromEnv } from '@tep/kafka'
import { createLogger } from '@tep/observability'
import { reenrichHandles } from './reenrich.ts'

const USAGE = `reenrich: re-enrich the transactions whose handle (transaction mapping) was invalidated.

Finds, in transactions.enriched.v1, the transactions whose latest result used one of
the handles and was produced before the handle's invalidation, and republishes their
raw events to transactions.raw.v1 with refresh=true. transaction-ingest then re-runs the
lookup with refresh=true and writes a new result for the same transactionId.

usage: npm run reenrich -w services/refresher -- [options]

options:
  --handles h1,h2          handles to re-enrich (treated as invalidated now)
  --from-invalidations T   also take every handle-level item on merchant.invalidations.v1
                           since T (ISO-8601 date-time or a duration ago: 24h, 7d)
  --enriched-since T       only consider enriched results written since T (default: all retained)
  --dry-run                report what would be republished, write nothing
  -h, --help               this text

Prints a JSON report (handles, scanned, republished, alreadyRefreshed, transactionIds).
`

function moment(raw: string, option: string): Date {
  const parsed = parse.moment.safeParse(raw)
  if (!parsed.success)
    throw new Error(
      `${option}: ${parsed.error.issues[0]?.message ?? 'invalid moment'}, got ${JSON.stringify(raw)}`,
    )
  return parsed.data()
}

const env = { ...kafkaVars, LOG_LEVEL: observabilityVars.LOG_LEVEL }
let args
try {
  args = parseArgs({
    options: {
      handles: { type: 'string' },
      'from-invalidations': { type: 'string' },
      'enriched-since': { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n\n${USAGE}`)
  process.exit(2)
}
if (args.help) {
  process.stdout.write(`${USAGE}\nenvironment:\n${formatEnvHelp(env)}\n`)
  process.exit(0)
}
const handles = (args.handles ?? '')
  .split(',')
  .map((h) => h.trim())
  .filter((h) => h.length > 0)
if (handles.length === 0 && args['from-invalidations'] === undefined) {
  process.stderr.write(`give --handles or --from-invalidations (or both)\n\n${USAGE}`)
  process.exit(2)
}
let cfg
let invalidationsSince: Date | undefined
let enrichedSince: Date | undefined
try {
  cfg = loadConfig('reenrich', env, process.env)
  if (args['from-invalidations'] !== undefined)
    invalidationsSince = moment(args['from-invalidations'], '--from-invalidations')
  if (args['enriched-since'] !== undefined) enrichedSince = moment(args['enriched-since'], '--enriched-since')
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : (err as Error).message}\n`)
  process.exit(2)
}

// Logs go to stderr so that stdout carries only the JSON report.
const logger = createLogger({ name: 'reenrich', level: cfg.LOG_LEVEL, destination: process.stderr })
const kafka = createKafka({ brokers: cfg.KAFKA_BROKERS, clientId: 'reenrich', logLevel: 'warn' }, logger)
const report = await reenrichHandles({
  kafka,
  serde: new AvroSerde({ registry: createSchemaRegistry({ url: cfg.SCHEMA_REGISTRY_URL, ...schemaRegistrySecurityFromEnv(), logger }), logger }),
  handles,
  ...(invalidationsSince === undefined ? {} : { invalidationsSince }),
  ...(enrichedSince === undefined ? {} : { enrichedSince }),
  dryRun: args['dry-run'],
  logger,
})
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
