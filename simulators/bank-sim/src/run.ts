import { envVar, exitWithConfigProblem, formatEnvHelp, loadConfigOrExit, observabilityVars, parse } from '@tep/config'
import { createLogger } from '@tep/observability'
import { CLI_USAGE, contractDriftSeed, parseCliOptions, type CliOptions } from './cli-options.ts'
import { BankSimConfigError } from './errors.ts'
import { DEFAULT_REGISTERED_CLIENT } from './oauth/registered-client.ts'
import { startBankSim } from './server.ts'

const ENV = {
  SIM_BANK_CLIENT_ID: envVar(parse.nonEmpty, 'client id of the application registered with the simulated bank', { default: DEFAULT_REGISTERED_CLIENT.clientId }),
  SIM_BANK_CLIENT_SECRET: envVar(parse.nonEmpty, 'its client secret', { default: DEFAULT_REGISTERED_CLIENT.clientSecret, secret: true }),
  SIM_BANK_REDIRECT_URI: envVar(parse.csv, 'its registered redirect URI(s), comma-separated', { default: DEFAULT_REGISTERED_CLIENT.redirectUris.join(',') }),
  SIM_BANK_CONTRACT_DRIFT: envVar(parse.nonEmpty, 'contract-drift mode: a seed, or true for the --seed value; unset or false = off (--contract-drift wins)', { optional: true }),
  LOG_LEVEL: observabilityVars.LOG_LEVEL,
}

let options: CliOptions
try {
  options = parseCliOptions(process.argv.slice(2))
} catch (err) {
  process.stderr.write(`bank-sim: ${(err as Error).message}\n\n${CLI_USAGE}\n`)
  process.exit(2)
}
if (options.help) {
  process.stdout.write(`bank-sim: simulator of the bank's open-banking APIs (authorization, accounts, payments, cards)\n\n${CLI_USAGE}\n\nenvironment:\n${formatEnvHelp(ENV)}\n`)
  process.exit(0)
}
const env = loadConfigOrExit('bank-sim', ENV)
const logger = createLogger({ name: 'bank-sim', level: env.LOG_LEVEL })
const drift = contractDriftSeed(options, env.SIM_BANK_CONTRACT_DRIFT)

const sim = await startBankSim({
  port: options.port,
  host: options.host,
  seed: options.seed,
  clients: options.clients,
  historyDays: options.historyDays,
  merchantData: { seed: /^[0-9]+$/.test(options.dataSeed) ? Number(options.dataSeed) : options.dataSeed, shops: options.shops, merchants: options.merchants },
  registeredClients: [{ ...DEFAULT_REGISTERED_CLIENT, clientId: env.SIM_BANK_CLIENT_ID, clientSecret: env.SIM_BANK_CLIENT_SECRET, redirectUris: env.SIM_BANK_REDIRECT_URI }],
  https: options.https,
  ...(drift === undefined ? {} : { contractDrift: drift }),
  logger,
}).catch((err: unknown) => {
  // A registered client the simulator cannot accept (e.g. a redirect URI that is
  // not a URL) is a configuration mistake, not a crash.
  if (err instanceof BankSimConfigError) exitWithConfigProblem('bank-sim', 'registered client (SIM_BANK_*)', err.message)
  throw err
})

logger.info({ url: sim.url, clients: options.clients, seed: options.seed, contractDrift: drift ?? null, clientId: env.SIM_BANK_CLIENT_ID, redirectUris: env.SIM_BANK_REDIRECT_URI }, 'bank simulator listening')
process.stdout.write(
  `bank simulator listening on ${sim.url}\n  consent page: ${sim.url}/oauth2/authorize?response_type=code&client_id=${encodeURIComponent(env.SIM_BANK_CLIENT_ID)}&scope=AISP&state=demo\n  test clients: ${sim.url}/__admin/clients\n`,
)

if (sim.ca !== undefined) process.stdout.write(`self-signed certificate (trust it with curl --cacert or NODE_EXTRA_CA_CERTS):\n${sim.ca}`)

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
