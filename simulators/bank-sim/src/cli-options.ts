import { parseArgs } from 'node:util'

export interface CliOptions {
  help: boolean
  port: number
  host: string
  seed: string
  clients: number
  historyDays: number
  dataSeed: string
  shops: number
  merchants: number
  https: boolean
}

export const CLI_USAGE = `usage: npm run sim:bank -- [options]

options:
  --port N           port to listen on (default 8182; 0 picks a free one)
  --host H           interface to bind (default 127.0.0.1)
  --seed S           seed of the generated clients, accounts and histories (default bank-sim)
  --clients N        number of generated bank clients, user1..userN (default 5)
  --history-days N   days of generated history (default 730)
  --data-seed S      seed of the enrichment simulator's data set the card payments point to (default 1)
  --shops N          its number of shops (default 50000; keep equal to the enrichment simulator's)
  --merchants N      its number of merchants (default 5000)
  --https            serve TLS 1.2+ with a generated self-signed certificate (needs openssl; printed at start)
  -h, --help         show this help`

function int(value: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new RangeError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`)
  return Number(value)
}

export function parseCliOptions(argv: string[]): CliOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      port: { type: 'string' },
      host: { type: 'string' },
      seed: { type: 'string' },
      clients: { type: 'string' },
      'history-days': { type: 'string' },
      'data-seed': { type: 'string' },
      shops: { type: 'string' },
      merchants: { type: 'string' },
      https: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  })
  return {
    help: values.help === true,
    port: int(values.port, 'port', 0, 65535, 8182),
    host: values.host ?? '127.0.0.1',
    seed: values.seed ?? 'bank-sim',
    clients: int(values.clients, 'clients', 1, 1000, 5),
    historyDays: int(values['history-days'], 'history-days', 1, 3650, 730),
    dataSeed: values['data-seed'] ?? '1',
    shops: int(values.shops, 'shops', 1, 10_000_000, 50_000),
    merchants: int(values.merchants, 'merchants', 1, 10_000_000, 5_000),
    https: values.https === true,
  }
}
