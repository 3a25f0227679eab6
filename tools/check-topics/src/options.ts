import { parseArgs } from 'node:util'
import { checkRegistryTransport, KafkaConfigError, kafkaSecurityFromEnv, schemaRegistrySecurityFromEnv, type KafkaSecurity, type SchemaRegistrySecurity } from '@tep/kafka'

export const DEFAULT_TOPICS = { raw: 'transactions.raw.v1', enriched: 'transactions.enriched.v1', dlq: 'transactions.dlq.v1' } as const

export const HELP = `usage: npm run check-topics -- [options]

Reads the raw input topic and the enriched and DLQ output topics from the start
with read_committed isolation (its own Fetch-level reader, not the pipeline's
client) and checks, by key (the transaction id), that every raw record has
exactly one outcome: one enriched record or one DLQ record. Prints a JSON
summary on stdout; progress goes to stderr.

Exit status: 0 all checked records are accounted for, 1 a finding (lost,
duplicated, DLQ records caused by faults rather than by the record, outcomes
without a raw record, enriched values whose transactionId differs from the key),
2 bad options or the cluster could not be read.

options:
  --brokers LIST        comma-separated host:port (default $KAFKA_BROKERS or 127.0.0.1:9092)
  --registry URL        Confluent-compatible registry; when given, enriched values are
                        decoded and their transactionId and status checked
                        (default $SCHEMA_REGISTRY_URL; --no-registry skips decoding)
  --no-registry         do not decode values
  --raw TOPIC           default ${DEFAULT_TOPICS.raw}
  --enriched TOPIC      default ${DEFAULT_TOPICS.enriched}
  --dlq TOPIC           default ${DEFAULT_TOPICS.dlq}
  --from TIME           only check raw records with a timestamp at or after TIME
  --to TIME             ... and at or before TIME (TIME: ISO-8601, epoch ms, or a
                        duration ago such as 30m, 2h, 1d). Their outcomes are looked
                        up in the whole output topics. Leave records still in flight
                        out of the window, or they count as lost.
  --record-codes LIST   DLQ error codes that mean "this record is bad" (default: the
                        pipeline's decode and validation codes); any other code
                        counts as a DLQ record caused by a fault
  --samples N           keys listed per finding in the summary (default 20)
  --timeout S           give up reading after S seconds (default 600)
  -h, --help            this text

Kafka TLS and SASL come from the variables every service reads
(KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME,
KAFKA_SASL_PASSWORD[_FILE], KAFKA_SSL_CA_FILE, KAFKA_SSL_CERT_FILE,
KAFKA_SSL_KEY_FILE, KAFKA_SSL_REJECT_UNAUTHORIZED, KAFKA_SSL_SERVER_NAME,
KAFKA_ALLOW_INSECURE), the registry's basic auth from SCHEMA_REGISTRY_USERNAME and
SCHEMA_REGISTRY_PASSWORD[_FILE]; see docs/security.md, "Kafka and schema registry".`

export interface CheckOptions {
  brokers: string[]
  registryUrl: string | undefined
  topics: { raw: string; enriched: string; dlq: string }
  window: { from?: number; to?: number } | undefined
  recordCodes: string[] | undefined
  samples: number
  timeoutMs: number
  /** From the KAFKA_SECURITY_* variables (kafkaSecurityFromEnv). */
  security: KafkaSecurity
  /** From the SCHEMA_REGISTRY_USERNAME/PASSWORD variables. */
  registrySecurity: SchemaRegistrySecurity
}

export class OptionsError extends Error {
  override name = 'OptionsError'
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** ISO-8601, epoch milliseconds, or a duration before `now` ("30m"). */
export function parseTime(text: string, name: string, now = Date.now()): number {
  const d = DURATION.exec(text)
  if (d) return now - Number(d[1]) * UNIT_MS[d[2]!]!
  if (/^\d+$/.test(text)) return Number(text)
  const t = Date.parse(text)
  if (Number.isNaN(t)) throw new OptionsError(`${name} must be ISO-8601, epoch ms or a duration like 30m; got "${text}"`)
  return t
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): CheckOptions | 'help' {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        help: { type: 'boolean', short: 'h' },
        brokers: { type: 'string' },
        registry: { type: 'string' },
        'no-registry': { type: 'boolean' },
        raw: { type: 'string' },
        enriched: { type: 'string' },
        dlq: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        'record-codes': { type: 'string' },
        samples: { type: 'string' },
        timeout: { type: 'string' },
      },
    }))
  } catch (err) {
    throw new OptionsError(`${(err as Error).message} (see --help)`)
  }
  if (values.help) return 'help'
  const brokers = (values.brokers ?? env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((b) => b.trim()).filter(Boolean)
  if (brokers.length === 0 || brokers.some((b) => !/^[^:\s]+:\d+$/.test(b))) throw new OptionsError(`--brokers must be host:port[,host:port...]; got "${values.brokers ?? env.KAFKA_BROKERS}"`)
  const registryUrl = values['no-registry'] ? undefined : (values.registry ?? env.SCHEMA_REGISTRY_URL)
  if (registryUrl !== undefined && !/^https?:\/\//.test(registryUrl)) throw new OptionsError(`--registry must be an http(s) URL; got "${registryUrl}"`)
  const now = Date.now()
  const from = values.from === undefined ? undefined : parseTime(values.from, '--from', now)
  const to = values.to === undefined ? undefined : parseTime(values.to, '--to', now)
  if (from !== undefined && to !== undefined && from > to) throw new OptionsError('--from is after --to')
  const samples = Number(values.samples ?? '20')
  if (!Number.isInteger(samples) || samples < 0) throw new OptionsError(`--samples must be a non-negative integer; got "${values.samples}"`)
  const timeout = Number(values.timeout ?? '600')
  if (!(timeout > 0)) throw new OptionsError(`--timeout must be a positive number of seconds; got "${values.timeout}"`)
  let security: KafkaSecurity
  let registrySecurity: SchemaRegistrySecurity
  try {
    security = kafkaSecurityFromEnv(env)
    registrySecurity = schemaRegistrySecurityFromEnv(env)
    // Credentials never over http:// off loopback, as in every service.
    if (registryUrl !== undefined) checkRegistryTransport(registryUrl, registrySecurity.auth !== undefined)
  } catch (err) {
    if (err instanceof KafkaConfigError) throw new OptionsError(err.message)
    throw err
  }
  return {
    brokers,
    registryUrl,
    security,
    registrySecurity,
    topics: { raw: values.raw ?? DEFAULT_TOPICS.raw, enriched: values.enriched ?? DEFAULT_TOPICS.enriched, dlq: values.dlq ?? DEFAULT_TOPICS.dlq },
    window: from === undefined && to === undefined ? undefined : { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) },
    recordCodes: values['record-codes']?.split(',').map((c) => c.trim()).filter(Boolean),
    samples,
    timeoutMs: timeout * 1000,
  }
}
