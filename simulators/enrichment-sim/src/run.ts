import { ConfigError, formatEnvHelp, loadConfig } from '@tep/config'
import { createLogger } from '@tep/observability'
import { SIM_ENV } from './cli-env.ts'
import { CLI_USAGE, parseCliOptions } from './cli-options.ts'
import type { CliOptions } from './cli-options.ts'
import { startEnrichmentSim } from './sim.ts'

let options: CliOptions
try {
  options = parseCliOptions(process.argv.slice(2))
} catch (err) {
  process.stderr.write(`enrichment-sim: ${(err as Error).message}\n`)
  process.exit(2)
}
if (options.help) {
  process.stdout.write(`enrichment-sim: simulator of the merchant data enrichment API v5\n\n${CLI_USAGE}\n\nenvironment:\n${formatEnvHelp(SIM_ENV)}\n`)
  process.exit(0)
}
let env
try {
  env = loadConfig('enrichment-sim', SIM_ENV, process.env)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  process.stderr.write(`${err.message}\n`)
  process.exit(2)
}
const logger = createLogger({ name: 'enrichment-sim', level: env.LOG_LEVEL })
const driftOption = options.contractDrift ?? env.SIM_CONTRACT_DRIFT
const driftSeed = driftOption === undefined ? undefined : driftOption === '' ? options.seed : driftOption

const sim = await startEnrichmentSim({
  port: options.port,
  host: options.host,
  seed: /^[0-9]+$/.test(options.seed) ? Number(options.seed) : options.seed,
  shops: options.shops,
  ...(options.merchants === undefined ? {} : { merchants: options.merchants }),
  https: options.https,
  mutationsPerMinute: options.mutationsPerMinute,
  ...(options.rateLimitPerSecond === undefined ? {} : { rateLimitPerSecond: options.rateLimitPerSecond }),
  latencyMs: options.latencyMs,
  invalidationShape: options.invalidationShape,
  ...(driftSeed === undefined ? {} : { contractDrift: { seed: driftSeed } }),
  withoutBatchAndComplete: options.withoutBatchAndComplete,
  credentials: {
    clients: [
      { id: env.SIM_CLIENT_ID, secret: env.SIM_CLIENT_SECRET, scopes: ['find', 'read', 'invalidations', 'suggestions'] },
      { id: env.SIM_LIMITED_CLIENT_ID, secret: env.SIM_LIMITED_CLIENT_SECRET, scopes: ['find', 'read'] },
    ],
    basicUsers: [{ user: env.SIM_BASIC_USER, password: env.SIM_BASIC_PASSWORD, scopes: ['find', 'read', 'invalidations', 'suggestions'] }],
  },
  logger,
})

logger.info(
  { url: sim.url, tokenUrl: sim.tokenUrl, shops: sim.dataset.shopCount, merchants: sim.dataset.merchantCount, mutationsPerMinute: options.mutationsPerMinute, clientId: env.SIM_CLIENT_ID, basicUser: env.SIM_BASIC_USER },
  'enrichment simulator listening',
)
process.stdout.write(`enrichment simulator listening on ${sim.url} (token URL ${sim.tokenUrl})\n`)
if (sim.ca !== undefined) process.stdout.write(`self-signed certificate (trust it with curl --cacert):\n${sim.ca}`)

let closing = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) process.exit(1)
    closing = true
    sim.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error while closing the simulator')
        process.exit(1)
      },
    )
  })
}
