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
  /** Seed of the contract-drift mode; '' = the `--seed` value; undefined = off (or SIM_BANK_CONTRACT_DRIFT). */
  contractDrift: string | undefined
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
  --contract-drift[=S]  answer in the shapes the bank description leaves open (token answers without
                     expires_in, bare 401s, /payments without its slash ...), seeded by S (default: --seed);
                     also SIM_BANK_CONTRACT_DRIFT=<seed>|true
  -h, --help         show this help`

function int(value: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new RangeError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`)
  return Number(value)
}

export function parseCliOptions(argv: string[]): CliOptions {
  // An optional value: `--contract-drift` alone takes the default seed.
  const args = argv.map((a) => (a === '--contract-drift' ? '--contract-drift=' : a))
  const { values } = parseArgs({
    args,
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
      'contract-drift': { type: 'string' },
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
    contractDrift: values['contract-drift'],
  }
}

/**
 * The drift seed from the command line, else SIM_BANK_CONTRACT_DRIFT (`true` = the default
 * seed; unset, empty or `false` = off). The default seed is the `--seed` value.
 */
export function contractDriftSeed(options: Pick<CliOptions, 'contractDrift' | 'seed'>, env: string | undefined): string | undefined {
  const value = options.contractDrift ?? (env === undefined || env === '' || env === 'false' ? undefined : env === 'true' ? '' : env)
  if (value === undefined) return undefined
  return value === '' ? options.seed : value
}
