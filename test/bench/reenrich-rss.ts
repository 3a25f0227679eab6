/**
 * Memory harness for issue 35: the refresher's RSS floor across automatic
 * re-enrichment runs. Against a broker of your own (KAFKA_BROKERS,
 * SCHEMA_REGISTRY_URL: `npm run stack:up` or its --kafka-port/--registry-port):
 *
 *   node test/bench/reenrich-rss.ts fill [records=250000] [topic]
 *   node test/bench/reenrich-rss.ts runs [runs=12] [topic]
 *
 * `fill` writes realistic EnrichedTransaction records (the example shop and
 * merchant, 400 handles, one transaction id each) to a 6-partition topic.
 * `runs` calls reenrichHandles (dry run, one invalidated handle, so the scan
 * does its full work: every record decoded and offered to the selection) `runs`
 * times in this process and prints, after each run and a forced GC (run it with
 * --expose-gc), RssAnon and RssFile (/proc/self/status), the resident brk heap
 * (glibc's main arena) and other anonymous mappings (/proc/self/smaps) and
 * process.memoryUsage() in MB, with the run's peak RssAnon, as one JSON line.
 * RSS_GROW=n appends n records (ids from RSS_FILL_FROM) before each run, as the
 * soak's topic grows. Variants: MALLOC_* (glibc), LD_PRELOAD (another allocator);
 * RSS_LABEL names one in the output.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { AvroSerde, createKafka, createRecordProducer, createSchemaRegistry, ensureTopics, topicSpec, TOPICS } from '@tep/kafka'
import { createLogger } from '@tep/observability'
import { reenrichHandles } from '@tep/refresher'
import { exampleEnrichedTransaction, type EnrichedTransaction } from '@tep/schemas'

const [mode = 'runs', countArg, topicArg] = process.argv.slice(2)
const topic = topicArg ?? TOPICS.transactionsEnriched
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',')
const registryUrl = process.env.SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8081/apis/ccompat/v7'
const logger = createLogger({ name: 'reenrich-rss', level: 'warn' })
const kafka = createKafka({ brokers, clientId: 'reenrich-rss', logLevel: 'error' }, logger)
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: registryUrl }), logger })
const HANDLES = 400
const MB = 1024 * 1024

function mb(n: number): number {
  return Math.round((n / MB) * 10) / 10
}

function status(): { anon: number; file: number; rss: number } {
  const text = readFileSync('/proc/self/status', 'utf8')
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024
  return { anon: mb(kb('RssAnon')), file: mb(kb('RssFile')), rss: mb(kb('VmRSS')) }
}

/**
 * Resident anonymous memory by kind of mapping (/proc/self/smaps): the brk heap
 * (glibc's main arena), mappings of at most 64 MiB reserved in 64 MiB steps
 * (glibc's thread arenas), and the rest (V8's pages, large mmap'ed chunks).
 */
function smaps(): { brk: number; other: number } {
  let brk = 0
  let other = 0
  let current: 'brk' | 'other' | undefined
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line)
    if (head !== null) {
      const name = head[2] ?? ''
      current = name === '[heap]' ? 'brk' : head[1] === '0' && name === '' ? 'other' : undefined
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss !== null && current !== undefined) {
      if (current === 'brk') brk += Number(rss[1]) * 1024
      else other += Number(rss[1]) * 1024
    }
  }
  return { brk: mb(brk), other: mb(other) }
}

function sample(run: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  gc?.()
  const m = process.memoryUsage()
  return {
    run,
    ...status(),
    ...smaps(),
    heapUsed: mb(m.heapUsed),
    heapTotal: mb(m.heapTotal),
    external: mb(m.external),
    arrayBuffers: mb(m.arrayBuffers),
    ...extra,
  }
}

if (mode === 'fill') {
  const records = Number(countArg ?? 250_000)
  // Appends after an earlier fill (distinct transaction ids).
  const first = Number(process.env.RSS_FILL_FROM ?? 0)
  await ensureTopics(kafka, [{ ...topicSpec(TOPICS.transactionsEnriched), name: topic }], { logger })
  const codec = serde.topic(topic, 'EnrichedTransaction')
  await codec.register()
  const producer = createRecordProducer(kafka, { logger })
  const base = exampleEnrichedTransaction()
  const start = Date.now() - 3_600_000
  const chunk = 2_000
  try {
    for (let i = first; i < first + records; i += chunk) {
      const messages = []
      for (let j = i; j < Math.min(first + records, i + chunk); j++) {
        const transactionId = `tx-rss-${j.toString().padStart(8, '0')}`
        const handle = `h-${(j % HANDLES).toString().padStart(4, '0')}-${base.handle}`
        const value: EnrichedTransaction = {
          ...base,
          transactionId,
          raw: { ...base.raw, transactionId, receivedAt: start + j },
          handle,
          enrichedAt: start + j + 40,
        }
        messages.push({ key: transactionId, value: codec.encodeSync(value) })
      }
      await producer.send(topic, messages)
    }
  } finally {
    await producer.close()
  }
  console.log(JSON.stringify({ filled: records, topic }))
} else {
  const runs = Number(countArg ?? 12)
  const target = `h-0007-${exampleEnrichedTransaction().handle}`
  const env = process.env
  const variant = {
    label: env.RSS_LABEL ?? 'default',
    MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX,
    MALLOC_TRIM_THRESHOLD_: env.MALLOC_TRIM_THRESHOLD_,
    MALLOC_MMAP_THRESHOLD_: env.MALLOC_MMAP_THRESHOLD_,
    LD_PRELOAD: env.LD_PRELOAD,
  }
  console.log(JSON.stringify({ variant, ...sample(0) }))
  // RSS_GROW: records appended (by a child process) before each run, as the soak's topic grows.
  const grow = Number(env.RSS_GROW ?? 0)
  let filled = Number(env.RSS_FILL_FROM ?? 0)
  for (let run = 1; run <= runs; run++) {
    if (grow > 0) {
      execFileSync(process.execPath, [import.meta.filename, 'fill', String(grow), topic], {
        env: { ...env, RSS_FILL_FROM: String(filled) },
        stdio: 'ignore',
      })
      filled += grow
    }
    const started = performance.now()
    // The run's peak, sampled every 100 ms while it runs.
    let peakAnon = 0
    const peak = setInterval(() => (peakAnon = Math.max(peakAnon, status().anon)), 100)
    const report = await reenrichHandles({
      kafka,
      serde,
      handles: [target],
      dryRun: true,
      topics: { enriched: topic },
      logger,
    })
    const ms = Math.round(performance.now() - started)
    clearInterval(peak)
    console.log(JSON.stringify(sample(run, { peakAnon, scanned: report.scanned, selected: report.transactionIds.length, ms })))
  }
}
