import { parseArgs } from 'node:util'
import { checkRegistryTransport, KafkaConfigError, kafkaSecurityFromEnv, schemaRegistrySecurityFromEnv, TOPICS, type KafkaSecurity, type SchemaRegistrySecurity } from '@tep/kafka'
import { parseDlqId } from './dlq-entry.ts'
import { DlqOptionsError } from './errors.ts'
import type { Filter } from './selection.ts'

export const COMMANDS = ['list', 'show', 'redrive'] as const
export type Command = (typeof COMMANDS)[number]

export const DEFAULTS = {
  brokers: '127.0.0.1:9092',
  registry: 'http://127.0.0.1:8081/apis/ccompat/v7',
  dlqTopic: TOPICS.transactionsDlq,
  auditTopic: TOPICS.transactionsDlqRedrives,
  bucket: '1h',
  timeoutS: 60,
  perTransaction: 500,
} as const

interface Common {
  brokers: string[]
  security: KafkaSecurity
  registryUrl: string
  registrySecurity: SchemaRegistrySecurity
  dlqTopic: string
  auditTopic: string
  json: boolean
  timeoutMs: number
}

export type DlqOptions =
  | (Common & { command: 'list'; filter: Filter; bucketMs: number })
  | (Common & { command: 'show'; target: { partition: number; offset: string } | { key: string } })
  | (Common & {
      command: 'redrive'
      filter: Filter
      dryRun: boolean
      max: number | undefined
      operator: string
      note: string | null
      forceAgain: boolean
      perTransaction: number
    })

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** A duration such as 15m, 1h, 1d, in ms. */
export function parseDuration(text: string, name: string): number {
  const d = DURATION.exec(text)
  const ms = d === null ? Number.NaN : Number(d[1]) * UNIT_MS[d[2]!]!
  if (!(ms > 0)) throw new DlqOptionsError(`${name} must be a duration like 15m, 1h or 1d; got "${text}"`)
  return ms
}

/** ISO-8601, epoch milliseconds, or a duration before `now` ("30m"). */
export function parseTime(text: string, name: string, now = Date.now()): number {
  const d = DURATION.exec(text)
  if (d) return now - Number(d[1]) * UNIT_MS[d[2]!]!
  if (/^\d+$/.test(text)) return Number(text)
  const t = Date.parse(text)
  if (Number.isNaN(t)) throw new DlqOptionsError(`${name} must be ISO-8601, epoch ms or a duration ago like 30m; got "${text}"`)
  return t
}

const list = (values: string[] | undefined): string[] | undefined => {
  const out = values?.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)
  return out === undefined || out.length === 0 ? undefined : out
}

function positiveInt(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n < 1) throw new DlqOptionsError(`${name} must be a whole number of at least 1; got "${text}"`)
  return n
}

/** Parses `npm run dlq -- <command> [options]`; 'help' for --help (or no command). */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): DlqOptions | 'help' {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        brokers: { type: 'string' },
        registry: { type: 'string' },
        'dlq-topic': { type: 'string' },
        'audit-topic': { type: 'string' },
        json: { type: 'boolean' },
        timeout: { type: 'string' },
        reason: { type: 'string', multiple: true },
        since: { type: 'string' },
        until: { type: 'string' },
        'source-topic': { type: 'string', multiple: true },
        bucket: { type: 'string' },
        ids: { type: 'string', multiple: true },
        all: { type: 'boolean' },
        max: { type: 'string' },
        'dry-run': { type: 'boolean' },
        operator: { type: 'string' },
        note: { type: 'string' },
        'force-again': { type: 'boolean' },
        'per-transaction': { type: 'string' },
      },
    })
  } catch (err) {
    throw new DlqOptionsError(`${(err as Error).message} (see --help)`)
  }
  const { values, positionals } = parsed
  if (values.help || positionals.length === 0) return 'help'
  const command = positionals[0] as Command
  if (!COMMANDS.includes(command)) throw new DlqOptionsError(`unknown command "${positionals[0]}"; use one of ${COMMANDS.join(', ')} (see --help)`)

  const onlyFor = (names: Array<keyof typeof values>, commands: Command[]) => {
    for (const n of names)
      if (values[n] !== undefined && !commands.includes(command)) throw new DlqOptionsError(`--${n} is an option of ${commands.join(' and ')}, not of ${command}`)
  }
  onlyFor(['reason', 'since', 'until', 'source-topic'], ['list', 'redrive'])
  onlyFor(['bucket'], ['list'])
  onlyFor(['ids', 'all', 'max', 'dry-run', 'operator', 'note', 'force-again', 'per-transaction'], ['redrive'])
  if (command !== 'show' && positionals.length > 1) throw new DlqOptionsError(`${command} takes no arguments, got "${positionals.slice(1).join(' ')}" (see --help)`)

  const brokersText = values.brokers ?? env.KAFKA_BROKERS ?? DEFAULTS.brokers
  const brokers = brokersText.split(',').map((b) => b.trim()).filter(Boolean)
  if (brokers.length === 0 || brokers.some((b) => !/^[^:\s]+:\d+$/.test(b))) throw new DlqOptionsError(`--brokers must be host:port[,host:port...]; got "${brokersText}"`)
  const registryUrl = values.registry ?? env.SCHEMA_REGISTRY_URL ?? DEFAULTS.registry
  if (!/^https?:\/\//.test(registryUrl)) throw new DlqOptionsError(`--registry must be an http(s) URL; got "${registryUrl}"`)
  const timeoutS = Number(values.timeout ?? DEFAULTS.timeoutS)
  if (!(timeoutS > 0)) throw new DlqOptionsError(`--timeout must be a positive number of seconds; got "${values.timeout}"`)
  let security: KafkaSecurity
  let registrySecurity: SchemaRegistrySecurity
  try {
    security = kafkaSecurityFromEnv(env)
    registrySecurity = schemaRegistrySecurityFromEnv(env)
    checkRegistryTransport(registryUrl, registrySecurity.auth !== undefined)
  } catch (err) {
    if (err instanceof KafkaConfigError) throw new DlqOptionsError(err.message)
    throw err
  }
  const common: Common = {
    brokers,
    security,
    registryUrl,
    registrySecurity,
    dlqTopic: values['dlq-topic'] ?? DEFAULTS.dlqTopic,
    auditTopic: values['audit-topic'] ?? DEFAULTS.auditTopic,
    json: values.json ?? false,
    timeoutMs: timeoutS * 1000,
  }

  if (command === 'show') {
    const target = positionals[1]
    if (target === undefined || positionals.length > 2) throw new DlqOptionsError('show takes one record: show <partition:offset> or show <key> (the transaction id)')
    return { ...common, command, target: parseDlqId(target) ?? { key: target } }
  }

  const now = Date.now()
  const since = values.since === undefined ? undefined : parseTime(values.since, '--since', now)
  const until = values.until === undefined ? undefined : parseTime(values.until, '--until', now)
  if (since !== undefined && until !== undefined && since > until) throw new DlqOptionsError(`--since (${new Date(since).toISOString()}) is after --until (${new Date(until).toISOString()})`)
  const ids = list(values.ids)
  for (const id of ids ?? []) if (parseDlqId(id) === undefined) throw new DlqOptionsError(`--ids takes partition:offset values (e.g. 3:1042); got "${id}"`)
  const reasons = list(values.reason)
  const sourceTopics = list(values['source-topic'])
  const filter: Filter = {
    ...(reasons === undefined ? {} : { reasons }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
    ...(sourceTopics === undefined ? {} : { sourceTopics }),
    ...(ids === undefined ? {} : { ids: ids.map((id) => { const p = parseDlqId(id)!; return `${p.partition}:${p.offset}` }) }),
  }

  if (command === 'list') return { ...common, command, filter, bucketMs: parseDuration(values.bucket ?? DEFAULTS.bucket, '--bucket') }

  const dryRun = values['dry-run'] ?? false
  if (Object.keys(filter).length === 0 && !values.all) {
    throw new DlqOptionsError('redrive needs a selection: --reason, --since/--until, --source-topic or --ids (or --all for every record on the DLQ)')
  }
  if (values.all && Object.keys(filter).length > 0) throw new DlqOptionsError('--all selects every DLQ record; it does not combine with --reason, --since, --until, --source-topic or --ids')
  const operator = (values.operator ?? env.USER ?? env.LOGNAME ?? '').trim()
  if (operator === '' && !dryRun) throw new DlqOptionsError('say who re-drives: --operator <name> (default $USER, which is not set)')
  const note = values.note?.trim() || null
  if (!dryRun && note === null) throw new DlqOptionsError('say why in the audit record: --note "<why these records can be processed now>"')
  return {
    ...common,
    command,
    filter,
    dryRun,
    max: positiveInt(values.max, '--max'),
    operator,
    note,
    forceAgain: values['force-again'] ?? false,
    perTransaction: positiveInt(values['per-transaction'], '--per-transaction') ?? DEFAULTS.perTransaction,
  }
}
