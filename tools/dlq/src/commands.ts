import { AvroSerde, createKafka, createKafkaAdmin, createSchemaRegistry, type Kafka } from '@tep/kafka'
import { maskPansInText } from '@tep/observability'
import type { DlqEntry } from './dlq-entry.ts'
import { preflight, readDlq, readLedger, within } from './dlq-reader.ts'
import { DlqSelectionError, DlqUnavailableError } from './errors.ts'
import { groupEntries, groupsTable, formatTable } from './grouping.ts'
import type { Ledger } from './ledger.ts'
import type { DlqOptions } from './options.ts'
import { claimRedrive, redrive } from './redrive.ts'
import { checkFilter, matches, selectForRedrive, type RedriveSelection } from './selection.ts'
import { formatShown, showRecord } from './show.ts'

export interface Output {
  /** The result (a table, or one JSON document with --json). */
  out(text: string): void
  /** Progress and notes. */
  err(text: string): void
}

type Opts<C extends DlqOptions['command']> = Extract<DlqOptions, { command: C }>

function kafkaOf(o: DlqOptions): Kafka {
  return createKafka({ brokers: o.brokers, clientId: 'tep-dlq', security: o.security, connectionTimeoutMs: Math.min(o.timeoutMs, 10_000), logLevel: 'error' })
}

async function load(o: DlqOptions, kafka: Kafka, io: Output, since?: number): Promise<{ entries: DlqEntry[]; ledger: Ledger; existing: Set<string> }> {
  const { existing, dlqRecords } = await preflight(kafka, o.brokers, o.dlqTopic, [o.auditTopic], o.timeoutMs)
  io.err(`reading ${o.dlqTopic} (up to ${dlqRecords} record(s)) and the re-drive ledger ${o.auditTopic}`)
  const ledger = await readLedger(kafka, o.auditTopic, existing.has(o.auditTopic), o.timeoutMs)
  const entries = await readDlq({
    kafka,
    dlqTopic: o.dlqTopic,
    // Kafka timestamps are the failure time to within a transaction; a minute of slack keeps the edge.
    ...(since === undefined ? {} : { from: new Date(since - 60_000) }),
    timeoutMs: o.timeoutMs * 10,
    onProgress: (n) => io.err(`read ${n} of up to ${dlqRecords} DLQ record(s)`),
  })
  return { entries, ledger, existing }
}

export async function runList(o: Opts<'list'>, io: Output): Promise<number> {
  const kafka = kafkaOf(o)
  const { entries, ledger } = await load(o, kafka, io, o.filter.since)
  checkFilter(entries, { ...(o.filter.reasons === undefined ? {} : { reasons: o.filter.reasons }) })
  const groups = groupEntries(entries.filter((e) => matches(e, o.filter)), o.bucketMs, ledger, o.dlqTopic)
  io.out(o.json ? JSON.stringify({ dlqTopic: o.dlqTopic, bucketMs: o.bucketMs, groups }, null, 2) : groupsTable(groups))
  return 0
}

export async function runShow(o: Opts<'show'>, io: Output): Promise<number> {
  const kafka = kafkaOf(o)
  const { entries } = await load(o, kafka, io)
  const t = o.target
  const found = 'key' in t ? entries.filter((e) => e.key?.toString('utf8') === t.key) : entries.filter((e) => e.partition === t.partition && e.offset === t.offset)
  if (found.length === 0) {
    const what = 'key' in t ? `with key ${maskPansInText(t.key)}` : `at ${t.partition}:${t.offset}`
    throw new DlqSelectionError(`no DLQ record ${what} on ${o.dlqTopic} (ids are partition:offset, as list and redrive --dry-run print them)`)
  }
  const serde = new AvroSerde({ registry: createSchemaRegistry({ url: o.registryUrl, ...(o.registrySecurity.auth === undefined ? {} : { auth: o.registrySecurity.auth }), retries: 1 }) })
  const shown = []
  for (const entry of found) {
    try {
      shown.push(await within(o.timeoutMs, `the schema registry at ${o.registryUrl}`, showRecord(entry, serde)))
    } catch (err) {
      throw new DlqUnavailableError(`cannot decode ${entry.id}: the schema registry at ${o.registryUrl} is unreachable (${(err as Error).message}); check --registry / SCHEMA_REGISTRY_URL and run show again`, { cause: err })
    }
  }
  if (found.length > 1) io.err(`${found.length} DLQ records have this key; showing all`)
  io.out(o.json ? JSON.stringify(found.length === 1 ? shown[0] : shown, null, 2) : shown.map(formatShown).join('\n\n'))
  return 0
}

function selectionSummary(s: RedriveSelection): string[] {
  const lines: string[] = []
  if (s.alreadyRedriven.length > 0) lines.push(`${s.alreadyRedriven.length} matching record(s) left out: re-driven before (see list's RE-DRIVEN column; --force-again re-drives them again)`)
  if (s.masked.length > 0) lines.push(`${s.masked.length} matching record(s) left out: card numbers were masked in them when they were dead-lettered, so their bytes are not the original ones; have the source publish them again`)
  if (s.noSource.length > 0) lines.push(`${s.noSource.length} matching record(s) left out: no dlq.source.topic header, nowhere to send them`)
  if (s.overBudget > 0) lines.push(`${s.overBudget} record(s) left for a later run by --max`)
  return lines
}

export async function runRedrive(o: Opts<'redrive'>, io: Output): Promise<number> {
  const kafka = kafkaOf(o)
  // A real run takes the re-drive writer over before it reads the ledger, so no concurrent run can slip in between.
  let writer: Awaited<ReturnType<typeof claimRedrive>> | undefined
  try {
    await preflight(kafka, o.brokers, o.dlqTopic, [], o.timeoutMs)
    if (!o.dryRun) writer = await within(o.timeoutMs, `Kafka at ${o.brokers.join(',')}`, claimRedrive(kafka, o.dlqTopic, o.auditTopic))
    const { entries, ledger, existing } = await load(o, kafka, io, o.filter.ids === undefined ? o.filter.since : undefined)
    const selection = selectForRedrive(entries, { dlqTopic: o.dlqTopic, filter: o.filter, ledger, ...(o.max === undefined ? {} : { max: o.max }), forceAgain: o.forceAgain })
    for (const line of selectionSummary(selection)) io.err(line)
    const sources = [...new Set(selection.selected.map((e) => e.sourceTopic!))]
    const admin = createKafkaAdmin(kafka, '-dlq-sources')
    try {
      const topics = new Set(await within(o.timeoutMs, `Kafka at ${o.brokers.join(',')}`, admin.listTopics()))
      const missing = sources.filter((t) => !topics.has(t) && !existing.has(t))
      if (missing.length > 0) throw new DlqSelectionError(`the source topic(s) ${missing.join(', ')} of the selected records do not exist; nothing was re-driven`)
    } finally {
      await admin.close().catch(() => {})
    }
    const rows = selection.selected.map((e) => ({ id: e.id, reason: e.code, sourceTopic: e.sourceTopic!, failedAt: new Date(e.failedAt).toISOString(), key: e.key === null ? null : maskPansInText(e.key.toString('utf8')) }))
    if (o.dryRun) {
      const plan = { dryRun: true, wouldRedrive: rows.length, matched: selection.matched, alreadyRedriven: selection.alreadyRedriven.length, masked: selection.masked.length, noSource: selection.noSource.length, overBudget: selection.overBudget, records: rows }
      io.out(o.json ? JSON.stringify(plan, null, 2) : `${formatTable(['ID', 'REASON', 'SOURCE TOPIC', 'FAILED AT (UTC)', 'KEY'], rows.map((r) => [r.id, r.reason, r.sourceTopic, r.failedAt, r.key ?? '(null)']))}\ndry run: ${rows.length} record(s) would be re-driven; nothing was written`)
      return 0
    }
    io.err(`re-driving ${rows.length} record(s) to ${sources.join(', ')} as ${o.operator}${o.forceAgain ? ' (--force-again)' : ''}`)
    const selectionText: Record<string, unknown> = {
      ...o.filter,
      ...(o.filter.since === undefined ? {} : { since: new Date(o.filter.since).toISOString() }),
      ...(o.filter.until === undefined ? {} : { until: new Date(o.filter.until).toISOString() }),
      ...(o.max === undefined ? {} : { max: o.max }),
    }
    const result = await redrive(writer!, {
      kafka,
      dlqTopic: o.dlqTopic,
      auditTopic: o.auditTopic,
      records: selection.selected,
      operator: o.operator,
      note: o.note,
      forceAgain: o.forceAgain,
      selection: selectionText,
      perTransaction: o.perTransaction,
      onProgress: io.err,
    })
    io.out(o.json ? JSON.stringify({ ...result, auditTopic: o.auditTopic, records: rows }, null, 2) : `re-drove ${result.redriven} record(s) in ${result.transactions} transaction(s) as ${result.redriveId}: ${Object.entries(result.bySourceTopic).map(([t, n]) => `${n} to ${t}`).join(', ')}; audit records on ${o.auditTopic}`)
    return 0
  } finally {
    await writer?.close().catch(() => {})
  }
}
