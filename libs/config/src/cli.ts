import { parseArgs } from 'node:util'
import { formatEnvHelp, type EnvSpec } from './env-spec.ts'

export interface ServiceCli {
  name: string
  summary: string
  env: EnvSpec
  /** Extra usage text (flags of a simulator, examples). */
  usage?: string
}

/**
 * Handles `--help`/`-h` for a service's main.ts: prints what the service does
 * and every variable it reads, then exits. Returns normally otherwise.
 */
export function handleHelp(cli: ServiceCli, argv: string[] = process.argv.slice(2)): void {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } }, strict: false })
  if (!values.help) return
  const parts = [`${cli.name}: ${cli.summary}`, '', cli.usage ?? `usage: npm run start -w services/${cli.name}`, '', 'environment:', formatEnvHelp(cli.env)]
  process.stdout.write(parts.join('\n') + '\n')
  process.exit(0)
}
