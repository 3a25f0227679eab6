import { z } from 'zod'
import { ConfigError, type ConfigProblem } from './errors.ts'
import { secretFromEnv, type ReadSecretFile } from './secret-file.ts'

/**
 * One environment variable: its documentation, its default and how to parse it.
 * The same object feeds validation, `--help` and the README tables, so the three
 * cannot drift apart.
 */
export interface EnvVar<T> {
  doc: string
  /** Raw default (as it would be written in the environment); absent = required unless `optional`. */
  default?: string
  optional?: boolean
  /** Never printed, not even in errors (client secrets, keys); may also come from the file `<NAME>_FILE`. */
  secret?: boolean
  schema: z.ZodType<T>
}

export type EnvSpec = Record<string, EnvVar<unknown>>

export type ConfigOf<S extends EnvSpec> = {
  [K in keyof S]: S[K] extends EnvVar<infer T> ? (S[K]['optional'] extends true ? T | undefined : T) : never
}

export function envVar<T>(schema: z.ZodType<T>, doc: string, options: Omit<EnvVar<T>, 'schema' | 'doc'> = {}): EnvVar<T> {
  return { ...options, schema, doc }
}

/**
 * Reads and validates every variable of `spec` from `env`. An empty string
 * counts as unset, which is what operators mean by `FOO=` in a compose file.
 * A `secret` variable may instead be read from the file `<NAME>_FILE` names.
 */
export function loadConfig<S extends EnvSpec>(
  service: string,
  spec: S,
  env: NodeJS.ProcessEnv = process.env,
  readFile?: ReadSecretFile,
): ConfigOf<S> {
  const problems: ConfigProblem[] = []
  const out: Record<string, unknown> = {}
  for (const [name, variable] of Object.entries(spec)) {
    let given = env[name]
    if (variable.secret) {
      const found = secretFromEnv(env, name, readFile)
      if (!found.ok) {
        problems.push({ variable: name, message: found.problem })
        continue
      }
      given = found.value
    }
    const raw = given === undefined || given === '' ? variable.default : given
    if (raw === undefined) {
      if (variable.optional) {
        out[name] = undefined
        continue
      }
      problems.push({ variable: name, message: `is required (${variable.doc})` })
      continue
    }
    const parsed = variable.schema.safeParse(raw)
    if (parsed.success) {
      out[name] = parsed.data
    } else {
      const reason = parsed.error.issues.map((i) => i.message).join('; ')
      const shown = variable.secret ? '' : `, got ${JSON.stringify(raw)}`
      problems.push({ variable: name, message: `${reason}${shown}` })
    }
  }
  if (problems.length > 0) throw new ConfigError(service, problems)
  return out as ConfigOf<S>
}

/** Plain-text table of the variables, for `--help`. */
export function formatEnvHelp(spec: EnvSpec): string {
  const rows = Object.entries(spec).map(([name, v]) => {
    const dflt = v.default !== undefined ? (v.secret ? ' (default: built-in)' : ` (default: ${v.default})`) : v.optional ? ' (optional)' : ' (required)'
    const file = v.secret ? `\n      (or ${name}_FILE: a file holding it)` : ''
    return `  ${name}\n      ${v.doc}${dflt}${file}`
  })
  return rows.join('\n')
}

/** Markdown table of the variables, for READMEs (kept in sync by a test where it matters). */
export function formatEnvMarkdown(spec: EnvSpec): string {
  const head = '| variable | meaning | default |\n|---|---|---|'
  const rows = Object.entries(spec).map(([name, v]) => {
    const dflt = v.default !== undefined ? (v.secret ? '(built-in, for the simulator)' : `\`${v.default}\``) : v.optional ? '(unset)' : '**required**'
    return `| \`${name}\` | ${v.doc} | ${dflt} |`
  })
  return [head, ...rows].join('\n')
}
