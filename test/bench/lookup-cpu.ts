/**
 * CPU per single lookup of the ingest's request path, without Kafka: the same
 * enrichment client and Lookups the ingest builds (single mode), against an
 * enrichment-sim the caller runs, at a fixed concurrency. Prints one JSON line
 * with the process's CPU time (user + system, all threads: GC and the kernel's
 * loopback TCP work count) per lookup after a warm-up. For A/B comparisons of
 * request-path changes run side by side (see docs/benchmarks.md, "Method"):
 *
 *   node test/bench/lookup-cpu.ts <simUrl> [lookups=20000] [concurrency=16] [warmup=5000]
 *
 * Under valgrind (`valgrind --tool=callgrind node test/bench/lookup-cpu.ts <url> N 16 1000`)
 * the instruction count is repeatable whatever else the machine does: the count
 * of a run with 1 500 lookups minus one with 500, over 1 000, is the user-space
 * instructions per lookup, start-up and warm-up cancelled out.
 */
import { createEnrichmentClient } from '@tep/enrichment-client'
import { generateRawEvents } from '@tep/sample-traffic'
import { SimDataset } from '@tep/sim-data'
import { createLogger } from '@tep/observability'
import { cardLookupInput, createIngestMetrics, Lookups } from '@tep/transaction-ingest'
import { Registry } from 'prom-client'
import { SIM_CREDENTIALS } from './processors.ts'

const [url = 'http://127.0.0.1:18080', countArg = '20000', concArg = '16', warmArg = '5000'] = process.argv.slice(2)
const count = Number(countArg)
const concurrency = Number(concArg)
const inputs = generateRawEvents(new SimDataset(), { count: 5_000, seed: 31, kind: 'card', idPrefix: 'cpu' })
  .filter((e) => e.raw.card !== null)
  .map((e) => cardLookupInput(e.raw, e.raw.card!))
// As the ingest builds them (services/transaction-ingest/src/main.ts): a logger at warn, the metrics.
const logger = createLogger({ name: 'lookup-cpu', level: 'warn' })
const client = createEnrichmentClient({ baseUrl: url, credentials: { type: 'oauth', ...SIM_CREDENTIALS }, limits: { maxConcurrent: 16 }, logger })
const lookups = new Lookups({ client, mode: 'single', batchMax: 500, lingerMs: 2, metrics: createIngestMetrics(new Registry()) })

async function run(n: number): Promise<Record<string, number>> {
  let next = 0
  const kinds: Record<string, number> = {}
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++
      const r = await lookups.card(inputs[i % inputs.length]!)
      kinds[r.kind] = (kinds[r.kind] ?? 0) + 1
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
  `${JSON.stringify({ lookups: count, concurrency, cpuUsPerLookup: Math.round(((used.user + used.system) / count) * 10) / 10, userUs: Math.round(used.user / count), systemUs: Math.round(used.system / count), kinds })}\n`,
)
await client.close()
