/**
 * The JavaScript cost of the ingest's request path alone: the same Lookups and
 * enrichment client as lookup-cpu.ts (single mode, logger at warn, metrics on),
 * over an in-process undici Dispatcher that answers every request on the next
 * turn of the event loop with a canned answer (found 74%, notFound 19%, 400 7%,
 * the simulator's mix). No socket, no HTTP parser, no other process: what is
 * left is the client's own work, so request-path changes compare with far less
 * noise than over loopback (see docs/benchmarks.md, "Method").
 *
 *   node test/bench/lookup-js.ts [lookups=100000] [concurrency=16] [warmup=20000] [bare]
 *
 * `bare`: the floor, undici's `request` on the same dispatcher with the same
 * path and headers and the body read as text, no client around it.
 */
import { Dispatcher } from 'undici'
import { answerOnNextTurn, jsonAnswer } from './canned-answer.ts'
import { createEnrichmentClient } from '@tep/enrichment-client'
import { generateRawEvents } from '@tep/sample-traffic'
import { SimDataset } from '@tep/sim-data'
import { createLogger } from '@tep/observability'
import { buildQueryString } from '@tep/http'
import { cardInputToQuery } from '@tep/enrichment-client'
import { cardLookupInput, createIngestMetrics, Lookups } from '@tep/transaction-ingest'
import { Registry } from 'prom-client'

const [countArg = '100000', concArg = '16', warmArg = '20000', bareArg] = process.argv.slice(2)
const count = Number(countArg)
const concurrency = Number(concArg)
const bare = bareArg === 'bare'

const json = jsonAnswer
const TOKEN = json(200, { access_token: 'x'.repeat(300), token_type: 'Bearer', expires_in: 300 })
const ANSWERS = [
  json(200, { result: 'found', handle: 'WzsBgSlcDaEOZK6dqKjk82', shop: { uid: '1L9YmHn7rldNcNTUskFSr4' } }),
  json(200, { result: 'notFound', handle: 'MvOeg4e6zC1b6I45vNeRmJ' }),
  json(400, { code: 'INVALID_INPUT', message: 'mcc must be 4 digits', details: [{ field: 'mcc' }] }),
]
let served = 0

/** Answers on the next event-loop turn, as a socket read would. */
class CannedDispatcher extends Dispatcher {
  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const n = served++
    const answer = opts.path.includes('/token') ? TOKEN : ANSWERS[n % 100 < 74 ? 0 : n % 100 < 93 ? 1 : 2]!
    answerOnNextTurn(handler, answer)
    return true
  }
  override async close(): Promise<void> {}
}

const dispatcher = new CannedDispatcher()
const inputs = generateRawEvents(new SimDataset(), { count: 5_000, seed: 31, kind: 'card', idPrefix: 'cpu' })
  .filter((e) => e.raw.card !== null)
  .map((e) => cardLookupInput(e.raw, e.raw.card!))
const paths = inputs.map((i) => `/v5/shops/findByCardTransaction?${buildQueryString(cardInputToQuery(i))}`)
const logger = createLogger({ name: 'lookup-js', level: 'warn' })
const client = createEnrichmentClient({
  baseUrl: 'http://127.0.0.1:18080',
  credentials: { type: 'oauth', clientId: 'c', clientSecret: 's' },
  limits: { maxConcurrent: 16 },
  logger,
  dispatcher,
})
const lookups = new Lookups({ client, mode: 'single', batchMax: 500, lingerMs: 2, metrics: createIngestMetrics(new Registry()) })
const headers = { accept: 'application/json', 'user-agent': 'tep-http/0.1', authorization: `Bearer ${'x'.repeat(300)}` }

async function one(i: number): Promise<string> {
  if (!bare) return (await lookups.card(inputs[i % inputs.length]!)).kind
  const res = await dispatcher.request({ origin: 'http://127.0.0.1:18080', path: paths[i % paths.length]!, method: 'GET', headers })
  await res.body.text()
  return String(res.statusCode)
}

async function run(n: number): Promise<Record<string, number>> {
  let next = 0
  const kinds: Record<string, number> = {}
  const worker = async (): Promise<void> => {
    while (next < n) {
      const kind = await one(next++)
      kinds[kind] = (kinds[kind] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return kinds
}

await run(Number(warmArg))
const before = process.cpuUsage()
const kinds = await run(count)
const used = process.cpuUsage(before)
process.stdout.write(
  `${JSON.stringify({ bare, lookups: count, concurrency, cpuUsPerLookup: Math.round(((used.user + used.system) / count) * 10) / 10, kinds })}\n`,
)
await client.close()
