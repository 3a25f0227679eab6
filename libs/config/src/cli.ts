import { parseArgs } from 'node:util'
import { ConfigError } from './errors.ts'
import { formatEnvHelp, loadConfig, type ConfigOf, type EnvSpec } from './env-spec.ts'

export interface ServiceCli {
  name: string
  summary: string
  env: EnvSpec
  /** Extra usage text (flags of a simulator, examples). */
  usage?: string
}

/**
 * Handles `--help`/`-h` for a service's entry point (run.ts): prints what the service does
 * and every variable it reads, then exits. Returns normally otherwise.
 */
export function handleHelp(cli: ServiceCli, argv: string[] = process.argv.slice(2)): void {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } }, strict: false })
  if (!values.help) return
  const parts = [`${cli.name}: ${cli.summary}`, '', cli.usage ?? `usage: npm run start -w services/${cli.name}`, '', 'environment:', formatEnvHelp(cli.env)]
  process.stdout.write(parts.join('\n') + '\n')
  process.exit(0)
}

/**
 * `loadConfig` for a service's entry point (run.ts): a bad or missing variable is an operator
 * mistake, so it prints every problem (ConfigError's message) and exits 2 instead
 * of crashing with a stack trace.
 */
export function loadConfigOrExit<S extends EnvSpec>(service: string, spec: S, env: NodeJS.ProcessEnv = process.env): ConfigOf<S> {
  try {
    return loadConfig(service, spec, env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`${err.message}\n`)
    process.exit(2)
  }
}

/**
 * A problem no single variable shows (credentials that come in pairs, settings
 * that must fit together): reported in ConfigError's words and exit code 2, like
 * any other bad variable.
 */
export function exitWithConfigProblem(service: string, variable: string, message: string): never {
  process.stderr.write(`${new ConfigError(service, [{ variable, message }]).message}\n`)
  process.exit(2)
}
