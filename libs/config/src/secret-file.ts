import { readFileSync } from 'node:fs'

export type ReadSecretFile = (path: string) => string

const defaultRead: ReadSecretFile = (path) => readFileSync(path, 'utf8')

export type SecretFromEnv =
  | { ok: true; value: string | undefined; from: 'env' | 'file' | 'unset' }
  | { ok: false; problem: string }

/**
 * A secret from `NAME`, or from the file named by `NAME_FILE` (a Kubernetes or compose secret
 * mounted as a file, so the value is in no environment a child process or `/proc/<pid>/environ`
 * shows). One trailing newline is dropped (`echo` and most editors add it). Setting both is a
 * mistake, not a precedence question: refused. The one implementation of `*_FILE`: loadConfig
 * uses it for every `secret` variable, @tep/kafka for the SASL and registry passwords.
 */
export function secretFromEnv(env: NodeJS.ProcessEnv, name: string, read: ReadSecretFile = defaultRead): SecretFromEnv {
  const direct = env[name] === '' ? undefined : env[name]
  const rawPath = env[`${name}_FILE`]
  const path = rawPath === undefined || rawPath.trim() === '' ? undefined : rawPath.trim()
  if (path === undefined) return { ok: true, value: direct, from: direct === undefined ? 'unset' : 'env' }
  if (direct !== undefined) return { ok: false, problem: `set ${name} or ${name}_FILE, not both` }
  let text: string
  try {
    text = read(path)
  } catch (err) {
    return { ok: false, problem: `${name}_FILE=${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` }
  }
  const value = text.replace(/\r?\n$/, '')
  if (value === '') return { ok: false, problem: `${name}_FILE=${path} is empty` }
  return { ok: true, value, from: 'file' }
}
