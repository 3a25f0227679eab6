import { accessSync, constants } from 'node:fs'
import { parseArgs } from 'node:util'
import { enrichmentApiVars, formatEnvHelp, kafkaVars, loadConfig, resolveEnrichmentAuth, envVar, ConfigError } from '@tep/config'
import { createEnrichmentClient } from '@tep/enrichment-client'
import { createKafka, createSchemaRegistry, TOPICS } from '@tep/kafka'
import { createLogger } from '@tep/observability'
import { z } from 'zod'
import { DEFAULTS, runBackfill, type BackfillInput, type BackfillReport } from './backfill.ts'
import { BackfillRefusedError, RetentionGapError } from './errors.ts'
import { InputFileError } from './file-rows.ts'
import { DEFAULT_NICE, lowerPriority } from './process-priority.ts'
import { createProgressReporter } from './progress.ts'
import { KNOWN_FIELDS } from './row-mapping.ts'
import { resolveYieldPolicy } from './yield-policy.ts'

const ENV = {
  ...kafkaVars,
  ...enrichmentApiVars,
  LOG_LEVEL: envVar(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'pino log level (logs go to stderr)', {
    default: 'warn',
  }),
}

const API_RPS = 50
const API_CONCURRENCY = 8

const HELP = `Usage: npm run backfill -- [options] <file>
       npm run backfill -- [options] --from <time> --to <time>

Enriches historical transactions through the same enrichment as live traffic
(a findBy call for every transaction, the same shop/merchant table, the same
events) into transactions.enriched.v1, each result marked with the backfill id.
Resumable: stop or kill it at any moment and run the same command again; every
input row ends as exactly one enriched record or one line of the rejects file.

Sources
  <file>                  CSV (first line = header of field names) or JSON Lines
                          (one object per line); .gz accepted. Field names:
                          ${KNOWN_FIELDS.slice(0, 11).join(', ')},
                          card.<field> and transfer.<field> (see the README).
  --format csv|jsonl      when the file name does not tell (*.csv, *.jsonl, *.ndjson, *.json, + .gz)
  --from <time> --to <time>
                          re-enrich the raw records of a time range of --topic
                          (ISO-8601, e.g. 2025-01-01T00:00:00Z; offsets found by timestamp)
  --topic <name>          raw topic of --from/--to (default ${TOPICS.transactionsRaw})
  --accept-retention-gap  backfill what --topic still holds when the range may start among
                          records retention removed, or retention removed records a killed
                          run had not read before this one resumed, or removes them ahead of
                          this run while it reads (refused without it, exit code 3)

Output
  --to-topic <name>       enriched results go here (default ${TOPICS.transactionsEnriched})
  --rejects <path>        rejects file, one JSON line per bad row with its line number,
                          code and reason (default <file>.rejects.jsonl)
  --again                 run an input that was already backfilled once more
  --dry-run               validate and count every row; produce nothing, call no API

Budget (live traffic first)
  --api-rps <n>           enrichment API requests per second of the backfill (default ${API_RPS})
  --api-concurrency <n>   API requests in flight at once (default ${API_CONCURRENCY})
  --live-target-lag <ms>  the backfill takes its budget back (a step per look) while the live ingest's
                          lag, as time (lag records / live rate), stays under this, and halves its
                          share while it is above (default ${DEFAULTS.targetLagMs})
  --live-stop-lag <ms>    stop API calls while the live lag is this much time or more (default ${DEFAULTS.stopLagMs})
  --max-live-lag <n>      stop while the live ingest lags this many records or more (default ${DEFAULTS.maxLiveLag}; 0 = never)
  --max-api-latency <ms>  count as behind (the share halves for one look) while API answers average
                          more than this (default ${DEFAULTS.maxApiLatencyMs}; 0 = never)
  --live-group <id>       consumer group of the live ingest (default ${DEFAULTS.liveGroup})
  --live-topic <name>     input topic of the live ingest (default ${DEFAULTS.liveTopic})
  --partitions <n>        partitions of the backfill's rows topic = enrichment parallelism (default ${DEFAULTS.partitions})
  --nice <n>              run at this nice level, 0-19 (default ${DEFAULT_NICE}): the live services on the same
                          machine get the CPU first; 0 leaves the priority as it is

Progress
  A progress bar on a terminal, otherwise one JSON line every --progress-interval
  seconds (default 5); a final JSON report line ({"event":"report",...}).
  --json                  JSON progress lines even on a terminal
  --progress-interval <s>

Topics of the table (default: the catalog's)
  --shops-topic, --merchants-topic, --fetched-topic, --state-topic <name>

  --session-timeout <s>   consumer session timeout: how long a killed run's partitions stay
                          claimed before a new run gets them (default 30; the broker minimum is 6)

Exit codes: 0 done, 1 failed, 2 bad usage or configuration, 3 refused (already
backfilled, see --again; or the range may start before what retention kept, see
--accept-retention-gap), 130 interrupted (run the same command to resume).

Environment:
${formatEnvHelp(ENV)}`

function usage(message: string): never {
  process.stderr.write(`${message}\nRun npm run backfill -- --help for the options.\n`)
  process.exit(2)
}

let parsed
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h', default: false },
      format: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      topic: { type: 'string' },
      'to-topic': { type: 'string' },
      rejects: { type: 'string' },
      again: { type: 'boolean', default: false },
      'accept-retention-gap': { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      'api-rps': { type: 'string' },
      'api-concurrency': { type: 'string' },
      'max-live-lag': { type: 'string' },
      'live-target-lag': { type: 'string' },
      'live-stop-lag': { type: 'string' },
      'max-api-latency': { type: 'string' },
      'live-group': { type: 'string' },
      'live-topic': { type: 'string' },
      partitions: { type: 'string' },
      nice: { type: 'string' },
      json: { type: 'boolean', default: false },
      'progress-interval': { type: 'string' },
      'shops-topic': { type: 'string' },
      'merchants-topic': { type: 'string' },
      'fetched-topic': { type: 'string' },
      'state-topic': { type: 'string' },
      'session-timeout': { type: 'string' },
    },
  })
} catch (err) {
  usage((err as Error).message)
}
const { values: args, positionals } = parsed
if (args.help) {
  process.stdout.write(`${HELP}\n`)
  process.exit(0)
}

function int(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < min) usage(`--${name} must be a whole number >= ${min}, got ${JSON.stringify(value)}`)
  return n
}

function time(name: string, value: string): Date {
  const d = new Date(value)
  if (Number.isNaN(d.getTime()) || !/(Z|[+-][0-9]{2}:?[0-9]{2})$/.test(value))
    usage(`--${name} must be ISO-8601 with a zone (e.g. 2025-01-01T00:00:00Z), got ${JSON.stringify(value)}`)
  return d
}

let input: BackfillInput
if (positionals.length > 1) usage(`one input file per run, got ${positionals.length}`)
if (positionals.length === 1) {
  if (args.from !== undefined || args.to !== undefined) usage('give either a file or --from/--to, not both')
  if (args['accept-retention-gap']) usage('--accept-retention-gap is for a --from/--to range of a topic, not a file')
  const format = args.format
  if (format !== undefined && format !== 'csv' && format !== 'jsonl') usage(`--format must be csv or jsonl, got ${format}`)
  const path = positionals[0]!
  try {
    accessSync(path, constants.R_OK)
  } catch (err) {
    usage(`cannot read the input file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  input = { kind: 'file', path, ...(format === undefined ? {} : { format }) }
} else if (args.from !== undefined && args.to !== undefined) {
  const from = time('from', args.from)
  const to = time('to', args.to)
  if (to <= from) usage('--to must be after --from')
  input = {
    kind: 'topic',
    topic: args.topic ?? TOPICS.transactionsRaw,
    from,
    to,
    ...(args['accept-retention-gap'] ? { acceptRetentionGap: true } : {}),
  }
} else {
  usage('name an input file, or give --from and --to')
}

let cfg
try {
  cfg = loadConfig('backfill', ENV)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  usage(err.message)
}
const resolved = resolveEnrichmentAuth(cfg)
// A dry run calls no API, so it needs no credentials.
if ('problem' in resolved && !args['dry-run']) usage(`invalid configuration: ${resolved.problem}`)
const auth = 'problem' in resolved ? { kind: 'basic' as const, user: '', password: '' } : resolved

const nice = int('nice', args.nice, DEFAULT_NICE, 0)
if (nice > 19) usage(`--nice must be from 0 to 19, got ${nice}`)
// First, before any client or thread pool is busy: everything the backfill does runs below the live path.
const priority = lowerPriority(nice)
const apiRps = int('api-rps', args['api-rps'], API_RPS, 1)
const apiConcurrency = int('api-concurrency', args['api-concurrency'], API_CONCURRENCY, 1)
const sessionTimeoutMs = int('session-timeout', args['session-timeout'], 30, 6) * 1000
// The yield policy's own rules (the stop lag above the target) checked now, as usage, not
// after the run has read its state and created its topics.
const livePolicy = {
  targetLagMs: int('live-target-lag', args['live-target-lag'], DEFAULTS.targetLagMs, 1),
  stopLagMs: int('live-stop-lag', args['live-stop-lag'], DEFAULTS.stopLagMs, 2),
}
try {
  resolveYieldPolicy(livePolicy)
} catch (err) {
  if (!(err instanceof RangeError)) throw err
  usage(`--live-stop-lag (${livePolicy.stopLagMs}) must be greater than --live-target-lag (${livePolicy.targetLagMs})`)
}
const logger = createLogger({ name: 'backfill', level: cfg.LOG_LEVEL, destination: process.stderr })
const kafka = createKafka({ brokers: cfg.KAFKA_BROKERS, clientId: `backfill-${process.pid}`, logLevel: 'warn' }, logger)
if (priority.failed > 0) logger.warn({ ...priority }, 'could not lower the priority of every thread; the backfill runs all the same')
else logger.info({ ...priority }, 'running at a lower priority')
const tty = process.stdout.isTTY === true && !args.json
const progress = createProgressReporter({ tty, intervalMs: int('progress-interval', args['progress-interval'], 5, 1) * 1000 })

const stop = new AbortController()
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping after the rows in flight; run the same command to resume\n`)
    stop.abort()
  })

let report: BackfillReport
try {
  report = await runBackfill({
    kafka,
    schemaRegistry: createSchemaRegistry({ url: cfg.SCHEMA_REGISTRY_URL }),
    createClient: (hooks) =>
      createEnrichmentClient({
        baseUrl: cfg.ENRICHMENT_API_URL,
        ...(auth.kind === 'oauth' ? { tokenUrl: auth.tokenUrl } : {}),
        credentials:
          auth.kind === 'oauth'
            ? { type: 'oauth', clientId: auth.clientId, clientSecret: auth.clientSecret }
            : { type: 'basic', username: auth.user, password: auth.password },
        // The backfill's own budget (bottleneck in @tep/http): a window of requests per second
        // and a bound on requests in flight, apart from the live ingest's.
        limits: { maxConcurrent: apiConcurrency, perInterval: { requests: apiRps, intervalMs: 1_000 } },
        hooks: { onResponse: (info) => hooks.onResponse(info) },
        logger,
      }),
    input,
    ...(args['to-topic'] === undefined ? {} : { toTopic: args['to-topic'] }),
    topics: {
      ...(args['shops-topic'] === undefined ? {} : { shops: args['shops-topic'] }),
      ...(args['merchants-topic'] === undefined ? {} : { merchants: args['merchants-topic'] }),
      ...(args['fetched-topic'] === undefined ? {} : { fetched: args['fetched-topic'] }),
    },
    ...(args['state-topic'] === undefined ? {} : { stateTopic: args['state-topic'] }),
    ...(args.rejects === undefined ? {} : { rejectsPath: args.rejects }),
    again: args.again,
    dryRun: args['dry-run'],
    partitions: int('partitions', args.partitions, DEFAULTS.partitions, 1),
    live: {
      group: args['live-group'] ?? DEFAULTS.liveGroup,
      topic: args['live-topic'] ?? DEFAULTS.liveTopic,
      maxLag: int('max-live-lag', args['max-live-lag'], DEFAULTS.maxLiveLag, 0),
      maxApiLatencyMs: int('max-api-latency', args['max-api-latency'], DEFAULTS.maxApiLatencyMs, 0),
      policy: livePolicy,
    },
    apiSlots: apiConcurrency,
    progress,
    logger,
    signal: stop.signal,
    consumer: { sessionTimeout: sessionTimeoutMs, heartbeatInterval: Math.max(500, Math.floor(sessionTimeoutMs / 10)) },
  })
} catch (err) {
  progress.stop()
  if (err instanceof BackfillRefusedError) {
    process.stderr.write(`refused: ${err.message}\n`)
    // The stable code (and the gaps) for scripts, on stdout where the report would have been.
    const gaps = err instanceof RetentionGapError ? { retentionGaps: err.gaps } : {}
    process.stdout.write(`${JSON.stringify({ event: 'refused', code: err.code, message: err.message, ...gaps })}\n`)
    process.exit(3)
  }
  if (err instanceof InputFileError) {
    process.stderr.write(`${err.message}\n`)
    process.exit(2)
  }
  logger.error({ err }, 'backfill failed')
  process.stderr.write(`backfill failed: ${(err as Error).message}\nRun the same command to resume.\n`)
  process.exit(1)
}

process.stdout.write(`${JSON.stringify({ event: 'report', ...report, nice: priority.nice })}\n`)
if (tty) {
  const r = report
  process.stdout.write(
    [
      '',
      `${r.dryRun ? 'Dry run of' : r.complete ? 'Backfilled' : 'Interrupted'} ${r.source} (backfill ${r.backfillId}${r.resumed ? ', resumed' : ''})`,
      `  rows read        ${r.rows}`,
      `  enriched         matched ${r.enriched.matched}, not found ${r.enriched.notFound}, refused by the API ${r.enriched.rejectedByApi}`,
      `  rejected         ${r.rejected}${r.rejectsFile === null ? '' : ` (reasons in ${r.rejectsFile})`}`,
      ...(r.retentionGaps.length === 0
        ? []
        : [
            `  retention gap    ${r.retentionGaps
              .map((g) =>
                g.nextOffset === undefined
                  ? `partition ${g.partition} starts at ${g.logStart}`
                  : `partition ${g.partition} skipped ${g.skippedOffsets} offset(s) from ${g.nextOffset} (its log now starts at ${g.logStart})`,
              )
              .join(', ')}: earlier records are gone`,
          ]),
      `  duration         ${(r.durationMs / 1000).toFixed(1)} s (${r.rowsPerSecond} rows/s this run)`,
      '',
    ].join('\n'),
  )
}
process.exit(report.complete ? 0 : 130)
