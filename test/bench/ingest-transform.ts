/**
 * CPU per record of the ingest's transform without Kafka: the service's own
 * `recordTransform` (decode, validate, minimise, look up, table read, splice-encode,
 * outcome note) with the enrichment client and Lookups as `main.ts` builds them,
 * over an in-process undici Dispatcher that answers on the next event-loop turn
 * with canned answers (single: 74% found, 19% notFound, 7% 400, the simulator's mix;
 * batch: found and notFound in the same shares). The table holds the simulator's
 * default data set (50,000 shops), as in the bench's ingest rows; the raw events are
 * the bench's (same generator, same seed, card only, the few invalid ones included).
 * `inflight` records are transformed at once, as the loop's budget does (default 2,000,
 * batch mode's budget; single mode's is 512 since 2026-11-29, inflight-budget.ts); every
 * `commitEvery` records the outcomes are counted as a commit would.
 *
 * No socket, no Kafka: what it leaves is the per-record JavaScript and its garbage,
 * so a change of the transform compares with far less noise than a broker run
 * (A/B as alternated whole processes). Prints one JSON line.
 *
 *   npm exec -- node test/bench/ingest-transform.ts [single|batch] [records=60000] [inflight=2000] [warmup=20000]
 */
import { Dispatcher } from 'undici'
import { answerOnNextTurn, jsonAnswer } from './canned-answer.ts'
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import avro from 'avsc'
import { AvroSerde, type PipelineRecord } from '@tep/kafka'
import { createEnrichmentClient } from '@tep/enrichment-client'
import { generateRawEvents } from '@tep/sample-traffic'
import { SimDataset } from '@tep/sim-data'
import { createLogger } from '@tep/observability'
import {
  createIngestCodecs,
  createIngestMetrics,
  createMerchantTables,
  Enricher,
  Lookups,
  MerchantDetails,
  merchantSnapshot,
  OutcomeTracker,
  recordTransform,
  shopSnapshot,
} from '@tep/transaction-ingest'
import { Registry } from 'prom-client'

const [modeArg = 'single', countArg = '60000', inflightArg = '2000', warmArg = '20000'] = process.argv.slice(2)
const mode = modeArg === 'batch' ? 'batch' : 'single'
const count = Number(countArg)
const inflight = Number(inflightArg)
const warmup = Number(warmArg)
const PARTITIONS = 6
const commitEvery = 1_000

/** Registers by subject, answers getSchema by id: what AvroSerde asks of the registry. */
function memoryRegistry(): SchemaRegistry {
  const types: avro.Type[] = []
  const ids = new Map<string, number>()
  return {
    getSchema: async (id: number) => types[id - 1],
    register: async ({ schema }: { schema: string }) => {
      let id = ids.get(schema)
      if (id === undefined) {
        types.push(avro.Type.forSchema(JSON.parse(schema) as avro.Schema))
        id = types.length
        ids.set(schema, id)
      }
      return { id }
    },
    api: {
      Subject: {
        config: async () => ({ data: () => ({ compatibilityLevel: 'BACKWARD' }) }),
        updateConfig: async () => undefined,
      },
    },
  } as unknown as SchemaRegistry
}

// The table: the simulator's default data set, as the bench seeds it.
const data = new SimDataset()
const tables = createMerchantTables({ invalidationsEnabled: true })
const fetchedAt = Date.now()
for (let m = 0; m < data.merchantCount; m++) {
  const sim = data.merchant(m)
  tables.merchants.applyFromTopic(sim.uid, merchantSnapshot(sim as never, sim.uid, fetchedAt))
}
const shopUids: string[] = []
for (let i = 0; i < data.shopCount; i++) {
  const sim = data.shop(i)
  shopUids.push(sim.uid)
  const api = { uid: sim.uid, type: sim.type, merchantUid: sim.merchantUid, tags: [...sim.tags], category: sim.category, location: { address: sim.address, ...(sim.coordinates === undefined ? {} : { coordinates: sim.coordinates }) }, url: sim.url, ...(sim.googlePlaceId === undefined ? {} : { googlePlaceId: sim.googlePlaceId }) }
  tables.shops.applyFromTopic(sim.uid, shopSnapshot(api as never, sim.uid, fetchedAt))
}

const json = jsonAnswer
const TOKEN = json(200, { access_token: 'x'.repeat(300), token_type: 'Bearer', expires_in: 300 })
const handle = (n: number) => `H${String(n).padStart(21, '0')}`
const found = (n: number) => ({ result: 'found', handle: handle(n), shop: { uid: shopUids[(n * 7919) % shopUids.length]! } })
const notFound = (n: number) => ({ result: 'notFound', handle: handle(n) })
const SINGLE_ANSWERS = Array.from({ length: 100 }, (_, n) =>
  n < 74 ? json(200, found(n)) : n < 93 ? json(200, notFound(n)) : json(400, { code: 'INVALID_INPUT', message: 'mcc must be 4 digits', details: [{ field: 'mcc' }] }),
)
let served = 0

/** Answers on the next event-loop turn, as a socket read would. */
class CannedDispatcher extends Dispatcher {
  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const n = served++
    let answer
    if (opts.path.includes('/token')) answer = TOKEN
    else if (opts.method === 'POST') {
      const entries = (JSON.parse(String(opts.body)) as { requests: unknown[] }).requests.length
      answer = json(200, Array.from({ length: entries }, (_, i) => ((n + i) % 100 < 80 ? found(n + i) : notFound(n + i))))
    } else answer = SINGLE_ANSWERS[n % 100]!
    answerOnNextTurn(handler, answer)
    return true
  }
  override async close(): Promise<void> {}
}

const topics = { input: 'raw', enriched: 'enriched', fetched: 'fetched' }
const serde = new AvroSerde({ registry: memoryRegistry() })
const codecs = await createIngestCodecs(serde, topics)
await codecs.raw.register()
const events = generateRawEvents(new SimDataset(), { count: 50_000, seed: 7, kind: 'card', idPrefix: 'xf' }).map((e) => e.raw)
const records: PipelineRecord[] = events.map((e, i) => ({
  topic: topics.input,
  partition: i % PARTITIONS,
  offset: String(Math.floor(i / PARTITIONS)),
  key: Buffer.from(e.transactionId),
  value: codecs.raw.encodeSync(e),
  headers: {},
  timestamp: String(fetchedAt),
}))

// As main.ts and startTransactionIngest build them.
const logger = createLogger({ name: 'ingest-transform', level: 'warn' })
const metrics = createIngestMetrics(new Registry())
const client = createEnrichmentClient({
  baseUrl: 'http://127.0.0.1:18080',
  credentials: { type: 'oauth', clientId: 'c', clientSecret: 's' },
  limits: { maxConcurrent: 64 },
  logger,
  dispatcher: new CannedDispatcher(),
})
const details = new MerchantDetails({ tables, client, instanceId: 'bench', metrics, tableHitsAsAvro: true })
const lookups = new Lookups({ client, mode, batchMax: 500, lingerMs: 5, complete: 'auto', tableIsCold: () => details.tableIsCold(), metrics })
const enricher = new Enricher({ lookups, details, onMasked: (path, n) => metrics.panMasked.inc({ path }, n) })
const outcomes = new OutcomeTracker()
const transform = recordTransform({ codecs, enricher, outcomes, metrics, topics })

let sequence = 0
async function run(n: number): Promise<Record<string, number>> {
  const kinds: Record<string, number> = {}
  let next = 0
  let done = 0
  const worker = async (): Promise<void> => {
    while (next < n) {
      next++
      const i = sequence++
      const base = records[i % records.length]!
      // A fresh offset per record, as the loop's would be.
      const record = { ...base, offset: String(Math.floor(i / PARTITIONS)), partition: i % PARTITIONS }
      try {
        const outputs = await transform(record)
        kinds[outputs.length > 1 ? 'fetched' : 'outputs'] = (kinds[outputs.length > 1 ? 'fetched' : 'outputs'] ?? 0) + 1
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'error'
        kinds[code] = (kinds[code] ?? 0) + 1
      }
      if (++done % commitEvery === 0)
        for (let p = 0; p < PARTITIONS; p++) outcomes.committed(topics.input, p, String(Math.floor(sequence / PARTITIONS)))
    }
  }
  await Promise.all(Array.from({ length: inflight }, worker))
  return kinds
}

await run(warmup)
const before = process.cpuUsage()
const kinds = await run(count)
const used = process.cpuUsage(before)
process.stdout.write(
  `${JSON.stringify({ mode, records: count, inflight, cpuUsPerRecord: Math.round(((used.user + used.system) / count) * 10) / 10, kinds })}\n`,
)
await client.close()
