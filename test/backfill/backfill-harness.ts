/**
 * Shared set-up of the backfill integration tests: input files built from the
 * enrichment simulator's own samples (expected outcomes come from the simulator),
 * bad rows of every kind, the backfill CLI as a child process, and readers of
 * its results.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CARD_FIELDS, TOP_FIELDS, TRANSFER_FIELDS, readLedger, type BackfillReport } from '@tep/backfill'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import type { AvroSerde, Kafka } from '@tep/kafka'
import type { EnrichedTransaction, RawTransaction } from '@tep/schemas'
import { readTopic } from '../kafka/read-topic.ts'
import type { KafkaTestKit } from '../support/kafka-test-kit.ts'
import { fetchSamples, rawFromSample, representable, SIM_CLIENT, testKafkaEnv, type SimSample, type TestTopics } from '../ingest/ingest-harness.ts'

const MAIN = fileURLToPath(new URL('../../tools/backfill/src/main.ts', import.meta.url))

export const CSV_HEADER = [
  ...TOP_FIELDS,
  ...CARD_FIELDS.map((f) => `card.${f}`),
  ...TRANSFER_FIELDS.map((f) => `transfer.${f}`),
]

/** A CSV cell: null = empty unquoted (absent), anything else quoted (so "" stays present and empty). */
function cell(value: string | null): string {
  return value === null ? '' : `"${value.replaceAll('"', '""')}"`
}

export function rawToCsvLine(raw: RawTransaction): string {
  const values: (string | null)[] = [
    raw.transactionId,
    raw.source,
    raw.sourceReference,
    raw.customerId,
    raw.accountId,
    new Date(raw.occurredAt).toISOString(),
    new Date(raw.receivedAt).toISOString(),
    raw.amount,
    raw.currency,
    raw.creditDebit,
    String(raw.refresh),
    ...CARD_FIELDS.map((f) => (raw.card === null ? null : raw.card[f])),
    ...TRANSFER_FIELDS.map((f) => (raw.transfer === null ? null : raw.transfer[f])),
  ]
  return values.map(cell).join(',')
}

export interface PlannedRow {
  line: number
  transactionId: string
  /** What the row must become: an enriched status, or a reject code. */
  expect: { enriched: 'MATCHED' | 'NOT_FOUND' | 'REJECTED' } | { rejected: string }
}

export interface PlannedFile {
  path: string
  rows: PlannedRow[]
}

/** Simulator samples of cards and transfers, found and not found, as representable raw events. */
export async function goodSamples(sim: EnrichmentSim, perKind: number, seed: number): Promise<SimSample[]> {
  const lists = await Promise.all([
    fetchSamples(sim, 'card', 'found', perKind, seed),
    fetchSamples(sim, 'card', 'notFound', Math.ceil(perKind / 2), seed + 1),
    fetchSamples(sim, 'transfer', 'found', Math.ceil(perKind / 4), seed + 2),
    fetchSamples(sim, 'transfer', 'notFound', Math.ceil(perKind / 4), seed + 3),
  ])
  return lists.flat().filter(representable)
}

const STATUS = { found: 'MATCHED', notFound: 'NOT_FOUND', invalid: 'REJECTED' } as const

/**
 * A CSV file of `count` good rows (cycling through the samples, each with a
 * unique transaction id) with a bad row after every `badEvery` good ones, each
 * bad row of a different kind. Line 1 is the header.
 */
export function writeCsv(dir: string, name: string, samples: SimSample[], count: number, badEvery: number): PlannedFile {
  const lines = [CSV_HEADER.join(',')]
  const rows: PlannedRow[] = []
  const template = rawFromSample(samples[0]!, 'template')
  const bad: { code: string; line: (id: string) => string }[] = [
    { code: 'RAW_INVALID_FIELD', line: (id) => rawToCsvLine({ ...template, transactionId: id, amount: '12,50' }) },
    { code: 'ROW_MISSING_FIELD', line: (id) => rawToCsvLine({ ...template, transactionId: id, currency: '' }) },
    {
      code: 'RAW_CARD_AND_TRANSFER',
      line: (id) =>
        rawToCsvLine({
          ...rawFromSample(samples.find((s) => s.kind === 'card')!, id),
          transfer: rawFromSample(samples.find((s) => s.kind === 'transfer')!, id).transfer,
        }),
    },
    { code: 'ROW_UNPARSABLE', line: (id) => `"${id}",2025-01-01T00:00:00Z,1.00` },
    {
      code: 'ROW_INVALID_VALUE',
      line: (id) => rawToCsvLine({ ...template, transactionId: id }).replace(/"20[0-9-]+T[0-9:.]+Z"/, '"yesterday"'),
    },
  ]
  let good = 0
  let badCount = 0
  while (good < count) {
    const sample = samples[good % samples.length]!
    const id = `${name}-good-${good}`
    lines.push(rawToCsvLine(rawFromSample(sample, id)))
    rows.push({ line: lines.length, transactionId: id, expect: { enriched: STATUS[sample.expected.outcome] } })
    good += 1
    if (good % badEvery === 0) {
      const kind = bad[badCount % bad.length]!
      const badId = `${name}-bad-${badCount}`
      lines.push(kind.line(badId))
      rows.push({ line: lines.length, transactionId: badId, expect: { rejected: kind.code } })
      badCount += 1
    }
  }
  const path = join(dir, `${name}.csv`)
  writeFileSync(path, `${lines.join('\n')}\n`)
  return { path, rows }
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'backfill-test-'))
}

export interface CliRun {
  child: ChildProcess
  /** Parsed JSON lines of stdout (progress and the report). */
  events: Record<string, unknown>[]
  stderr: string[]
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Resolves with the first progress event for which `test` holds. */
  progress(test: (p: { done: number; loaded: number; loadComplete: boolean }) => boolean): Promise<void>
  report(): BackfillReport | undefined
}

export const children = new Set<ChildProcess>()

/** The CLI on the test's topics: the tool's own state topic and the ingest's table topics. */
export function runCli(sim: EnrichmentSim, topics: TestTopics & { state: string }, args: string[]): CliRun {
  const child = spawn(
    process.execPath,
    [
      MAIN,
      '--json',
      '--progress-interval',
      '1',
      '--session-timeout',
      '6',
      '--state-topic',
      topics.state,
      '--to-topic',
      topics.enriched,
      '--fetched-topic',
      topics.fetched,
      '--shops-topic',
      topics.shops,
      '--merchants-topic',
      topics.merchants,
      '--live-group',
      topics.groupId,
      '--live-topic',
      topics.input,
      ...args,
    ],
    {
      env: {
        ...process.env,
        ...testKafkaEnv(),
        ENRICHMENT_API_URL: sim.url,
        ENRICHMENT_CLIENT_ID: SIM_CLIENT.clientId,
        ENRICHMENT_CLIENT_SECRET: SIM_CLIENT.clientSecret,
        LOG_LEVEL: process.env.BACKFILL_TEST_LOG_LEVEL ?? 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  children.add(child)
  const events: Record<string, unknown>[] = []
  const stderr: string[] = []
  const watchers: { test: (p: never) => boolean; resolve: () => void }[] = []
  let buffer = ''
  child.stdout?.on('data', (d: Buffer) => {
    buffer += d.toString('utf8')
    let nl
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      try {
        const event = JSON.parse(line) as Record<string, unknown>
        events.push(event)
        if (event.event === 'progress')
          for (const w of [...watchers])
            if (w.test(event as never)) {
              watchers.splice(watchers.indexOf(w), 1)
              w.resolve()
            }
      } catch {
        stderr.push(`stdout: ${line}`)
      }
    }
  })
  child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString('utf8')))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child)
      resolve({ code, signal })
    }),
  )
  return {
    child,
    events,
    stderr,
    exited,
    progress: (test) =>
      new Promise<void>((resolve, reject) => {
        watchers.push({ test: test as (p: never) => boolean, resolve })
        void exited.then(({ code, signal }) =>
          reject(new Error(`backfill exited (${code ?? signal}) before the awaited progress: ${stderr.join('')}`)),
        )
      }),
    report: () => events.find((e) => e.event === 'report') as BackfillReport | undefined,
  }
}

/** A raw event for a time-range backfill: written with `time` as its record timestamp. */
export interface TimedRaw {
  raw: RawTransaction
  time: number
}

/** Writes `events` to `topic` in one send: Avro, keyed by transaction id, each with its own timestamp. */
export async function produceTimed(kit: KafkaTestKit, serde: AvroSerde, topic: string, events: readonly TimedRaw[]): Promise<void> {
  const codec = serde.topic(topic, 'RawTransaction')
  const producer = kit.producer()
  await producer.connect()
  try {
    await producer.send({
      topic,
      messages: await Promise.all(
        events.map(async (e) => ({ key: e.raw.transactionId, value: await codec.encode(e.raw), timestamp: String(e.time) })),
      ),
    })
  } finally {
    await producer.disconnect()
  }
}

/** SIGKILLs a run at its first progress event with rows done; resolves with its backfill id. */
export async function killAtFirstProgress(run: CliRun): Promise<string> {
  await run.progress((p) => p.done > 0)
  run.child.kill('SIGKILL')
  const { code, signal } = await run.exited
  if (signal !== 'SIGKILL') throw new Error(`the backfill ended by itself (${code ?? signal}) before it was killed`)
  return run.events.find((e) => e.event === 'progress')!.backfillId as string
}

/** Enriched records of the topic by transaction id, read committed. */
export async function readEnriched(
  kafka: Kafka,
  serde: AvroSerde,
  topic: string,
): Promise<Map<string, EnrichedTransaction[]>> {
  const codec = serde.topic(topic, 'EnrichedTransaction')
  const byId = new Map<string, EnrichedTransaction[]>()
  for (const r of await readTopic(kafka, topic, { timeoutMs: 60_000 })) {
    const v = await codec.decode(r.value)
    byId.set(v.transactionId, [...(byId.get(v.transactionId) ?? []), v])
  }
  return byId
}

/**
 * Checks every planned row against the topic, the ledger and the rejects file:
 * the row's problems as readable strings (empty = every row has exactly its one
 * expected outcome).
 */
export async function rowProblems(
  kafka: Kafka,
  plan: PlannedFile,
  enriched: Map<string, EnrichedTransaction[]>,
  rejects: { line: number; code: string }[],
  backfillId: string,
): Promise<{ lost: string[]; duplicated: string[]; wrong: string[] }> {
  const lost: string[] = []
  const duplicated: string[] = []
  const wrong: string[] = []
  const rejectsByLine = new Map<number, { line: number; code: string }[]>()
  for (const r of rejects) rejectsByLine.set(r.line, [...(rejectsByLine.get(r.line) ?? []), r])
  for (const row of plan.rows) {
    const results = (enriched.get(row.transactionId) ?? []).filter((e) => e.backfill?.backfillId === backfillId)
    const rowRejects = rejectsByLine.get(row.line) ?? []
    const outcomes = results.length + rowRejects.length
    if (outcomes === 0) lost.push(`line ${row.line}`)
    else if (outcomes > 1) duplicated.push(`line ${row.line}`)
    else if ('enriched' in row.expect) {
      const e = results[0]
      if (e === undefined) wrong.push(`line ${row.line} rejected (${rowRejects[0]?.code}), expected ${row.expect.enriched}`)
      else if (e.status !== row.expect.enriched) wrong.push(`line ${row.line} ${e.status}, expected ${row.expect.enriched}`)
      else if (e.backfill?.row !== String(row.line)) wrong.push(`line ${row.line} marked as row ${e.backfill?.row}`)
    } else if (rowRejects[0]?.code !== row.expect.rejected)
      wrong.push(`line ${row.line} ${rowRejects[0]?.code ?? results[0]?.status}, expected reject ${row.expect.rejected}`)
  }
  const ledger = await readLedger(kafka, `backfill.${backfillId}.ledger`)
  const rows = new Set(ledger.map((e) => e.row))
  if (rows.size !== ledger.length) duplicated.push(`ledger: ${ledger.length} entries for ${rows.size} rows`)
  return { lost, duplicated, wrong }
}
