/**
 * Measures the cost of the opt-in re-enrichment of invalidated handles
 * (README, "Acting on handle invalidations automatically"): one run over
 * `--handles` handle-level items against an enriched topic of `--enriched`
 * results (each invalidated handle used by one of them). Writes throw-away
 * topics named measure-reenrich-<time>-*; needs KAFKA_BROKERS and
 * SCHEMA_REGISTRY_URL.
 *
 *   node services/refresher/scripts/measure-auto-reenrich.ts --handles 1000 --enriched 100000
 */
import { parseArgs } from 'node:util'
import { AvroSerde, createKafka, createRecordProducer, createSchemaRegistry, ensureTopics } from '@tep/kafka'
import { createLogger } from '@tep/observability'
import { exampleRawCardTransaction, type EnrichedTransaction, type Invalidation } from '@tep/schemas'
import { AutoReenricher } from '../src/index.ts'

const { values } = parseArgs({ options: { handles: { type: 'string', default: '1000' }, enriched: { type: 'string', default: '100000' } } })
const handles = Number(values.handles)
const total = Number(values.enriched)
const logger = createLogger({ name: 'measure-reenrich', level: 'warn' })
const kafka = createKafka({ brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'measure-reenrich', logLevel: 'error' })
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: process.env.SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8081/apis/ccompat/v7' }) })
const stamp = Date.now()
const topics = { invalidations: `measure-reenrich-${stamp}-inv`, enriched: `measure-reenrich-${stamp}-enriched`, raw: `measure-reenrich-${stamp}-raw` }
await ensureTopics(
  kafka,
  Object.values(topics).map((name) => ({ name, partitions: 3, cleanupPolicy: 'delete' as const, valueSchema: null, key: 'string', configs: {}, description: 'measurement' })),
  { logger },
)

const producer = createRecordProducer(kafka, { logger })
const enrichedCodec = serde.topic(topics.enriched, 'EnrichedTransaction')
const invalidationCodec = serde.topic(topics.invalidations, 'Invalidation')
await Promise.all([enrichedCodec.register(), invalidationCodec.register()])
const at = Date.now()
for (let i = 0; i < total; i += 1000) {
  const chunk: { key: string; value: Buffer }[] = []
  for (let j = i; j < Math.min(total, i + 1000); j++) {
    const value: EnrichedTransaction = {
      transactionId: `tx-${j}`,
      raw: exampleRawCardTransaction(`tx-${j}`),
      status: 'MATCHED',
      rejectReason: null,
      handle: `h-${j}`,
      shopUid: null,
      merchantUid: null,
      shop: null,
      merchant: null,
      enrichedAt: at - 60_000,
      lookup: null,
    }
    chunk.push({ key: value.transactionId, value: enrichedCodec.encodeSync(value) })
  }
  await producer.send(topics.enriched, chunk)
}
const items: { key: string; value: Buffer }[] = []
for (let i = 0; i < handles; i++) {
  // Spread over the topic: every (total / handles)-th result's handle is invalidated.
  const item: Invalidation = { itemId: i + 1, level: 'handle', type: 'remap', entityKey: `h-${Math.floor((i * total) / handles)}`, seenAt: at, feedCurrentTime: null }
  items.push({ key: item.entityKey, value: invalidationCodec.encodeSync(item) })
}
await producer.send(topics.invalidations, items)
await producer.close()

const reenricher = new AutoReenricher({ kafka, serde, topics, intervalMs: 3_600_000, maxPerRun: 1_000_000, firstLookbackMs: 3_600_000, logger })
const started = performance.now()
const report = await reenricher.runOnce()
const seconds = (performance.now() - started) / 1000
process.stdout.write(
  `${JSON.stringify({ handles, enriched: total, scanned: report.scanned, republished: report.republished, seconds: Number(seconds.toFixed(2)), loadavg: (await import('node:os')).loadavg().map((l) => Number(l.toFixed(2))) })}\n`,
)
