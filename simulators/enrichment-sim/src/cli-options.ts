import { parseArgs } from 'node:util'
import { EnrichmentSimConfigError } from './errors.ts'
import { INVALIDATION_SHAPES, type InvalidationShape } from './http/context.ts'

export interface CliOptions {
  help: boolean
  port: number
  host: string
  seed: string
  shops: number
  merchants: number | undefined
  https: boolean
  mutationsPerMinute: number
  rateLimitPerSecond: number | undefined
  latencyMs: number
  invalidationShape: InvalidationShape
  /** `--contract-drift[=<seed>]`: the drift seed ('' = the data seed); undefined = off. */
  contractDrift: string | undefined
  withoutBatchAndComplete: boolean
}

export const CLI_USAGE = `usage: npm run sim:enrichment -- [options]

options:
  --port N            TCP port (default 8181; 0 picks a free one)
  --host H            interface to listen on (default 127.0.0.1)
  --seed S            data seed, number or text (default 1)
  --shops N           number of shops (default 50000)
  --merchants N       number of merchants (default 5000, or a tenth of --shops when
                      that is less; at most --shops)
  --https             serve HTTPS with a generated self-signed certificate (needs openssl)
  --mutations N       background data changes per minute (default 6; 0 turns them off)
  --rate-limit N[/s]  requests per second per credential on /v5 (default unlimited)
  --latency-ms N      fixed latency added to every API and token request from the start (default 0)
  --invalidation-shape S
                      what each /v5/invalidations batch holds: full (level, type, ids, keys;
                      default) or ids-only (only ids, as the interface description shows)
  --contract-drift[=<seed>]
                      serve every shape the interface description leaves open (field types,
                      absent and unknown fields, a refused level, item/range 404 or reshaped,
                      token answers, trailing slashes), drawn from <seed> (default: --seed);
                      implies --without-batch-and-complete
  --without-batch-and-complete
                      answer 404 for the lookups the interface description does not publish
                      (the batch POSTs and the complete variants), as a service without them would
  -h, --help          this text

examples:
  npm run sim:enrichment -- --port 8181
  npm run sim:enrichment -- --shops 1000000 --merchants 100000 --mutations 0 --latency-ms 3`

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!/^[0-9]+$/.test(raw) || value < min || value > max) throw new EnrichmentSimConfigError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
  return value
}

export function parseCliOptions(argv: string[]): CliOptions {
  let parsed
  try {
    parsed = parseArgs({
      // `--contract-drift` alone means "drift, seeded by --seed".
      args: argv.map((a) => (a === '--contract-drift' ? '--contract-drift=' : a)),
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        port: { type: 'string' },
        host: { type: 'string' },
        seed: { type: 'string' },
        shops: { type: 'string' },
        merchants: { type: 'string' },
        https: { type: 'boolean' },
        mutations: { type: 'string' },
        'rate-limit': { type: 'string' },
        'latency-ms': { type: 'string' },
        'invalidation-shape': { type: 'string' },
        'contract-drift': { type: 'string' },
        'without-batch-and-complete': { type: 'boolean' },
      },
    })
  } catch (err) {
    throw new EnrichmentSimConfigError(`${(err as Error).message}\n\n${CLI_USAGE}`)
  }
  const v = parsed.values
  const rate = v['rate-limit']
  let rateLimitPerSecond: number | undefined
  if (rate !== undefined) {
    const match = /^([0-9]+(?:\.[0-9]+)?)(?:\/s)?$/.exec(rate)
    if (match === null || Number(match[1]) <= 0) throw new EnrichmentSimConfigError(`--rate-limit must be a positive number of requests per second such as 50 or 50/s, got ${JSON.stringify(rate)}`)
    rateLimitPerSecond = Number(match[1])
  }
  const latency = v['latency-ms']
  if (latency !== undefined && !(Number(latency) >= 0)) throw new EnrichmentSimConfigError(`--latency-ms must be a non-negative number, got ${JSON.stringify(latency)}`)
  const shape = v['invalidation-shape'] ?? 'full'
  if (!(INVALIDATION_SHAPES as readonly string[]).includes(shape)) throw new EnrichmentSimConfigError(`--invalidation-shape must be one of ${INVALIDATION_SHAPES.join(', ')}, got ${JSON.stringify(shape)}`)
  return {
    help: v.help === true,
    port: integer('port', v.port, 8181, 0, 65_535),
    host: v.host ?? '127.0.0.1',
    seed: v.seed ?? '1',
    shops: integer('shops', v.shops, 50_000, 1, 2 ** 27),
    merchants: v.merchants === undefined ? undefined : integer('merchants', v.merchants, 0, 1, 25_000_000),
    https: v.https === true,
    mutationsPerMinute: integer('mutations', v.mutations, 6, 0, 60_000),
    rateLimitPerSecond,
    latencyMs: latency === undefined ? 0 : Number(latency),
    invalidationShape: shape as InvalidationShape,
    contractDrift: v['contract-drift'],
    withoutBatchAndComplete: v['without-batch-and-complete'] === true,
  }
}
