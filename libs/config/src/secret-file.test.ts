import { describe, expect, it } from 'vitest'
import { ConfigError } from './errors.ts'
import { envVar, formatEnvHelp, loadConfig } from './env-spec.ts'
import { nonEmpty } from './parsers.ts'
import { secretFromEnv } from './secret-file.ts'

const files: Record<string, string> = { '/run/secrets/key': 'from-file\n', '/run/secrets/empty': '\n' }
const read = (path: string) => {
  const text = files[path]
  if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' })
  return text
}
const spec = {
  CLIENT_SECRET: envVar(nonEmpty, 'a secret', { optional: true, secret: true }),
  CLIENT_ID: envVar(nonEmpty, 'not a secret', { optional: true }),
}

describe('*_FILE variants of secret variables', () => {
  it('reads a secret from the file NAME_FILE names, without its trailing newline', () => {
    expect(loadConfig('svc', spec, { CLIENT_SECRET_FILE: '/run/secrets/key' }, read).CLIENT_SECRET).toBe('from-file')
    expect(loadConfig('svc', spec, { CLIENT_SECRET: 'direct' }, read).CLIENT_SECRET).toBe('direct')
  })

  it('refuses both at once, an unreadable file and an empty one, naming the variable and never the value', () => {
    for (const [env, message] of [
      [{ CLIENT_SECRET: 'direct', CLIENT_SECRET_FILE: '/run/secrets/key' }, 'set CLIENT_SECRET or CLIENT_SECRET_FILE, not both'],
      [{ CLIENT_SECRET_FILE: '/run/secrets/missing' }, 'CLIENT_SECRET_FILE=/run/secrets/missing cannot be read (ENOENT)'],
      [{ CLIENT_SECRET_FILE: '/run/secrets/empty' }, 'CLIENT_SECRET_FILE=/run/secrets/empty is empty'],
    ] as const) {
      let err: unknown
      try {
        loadConfig('svc', spec, env, read)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ConfigError)
      expect((err as ConfigError).message).toContain(message)
      expect((err as ConfigError).message).not.toContain('from-file')
      expect((err as ConfigError).message).not.toContain('direct')
    }
  })

  it('is only for secrets (a client id is configuration, not a file), and --help says so', () => {
    expect(loadConfig('svc', spec, { CLIENT_ID_FILE: '/run/secrets/key' }, read).CLIENT_ID).toBeUndefined()
    expect(formatEnvHelp(spec)).toContain('CLIENT_SECRET_FILE')
    expect(formatEnvHelp(spec)).not.toContain('CLIENT_ID_FILE')
  })

  it('secretFromEnv says where the value came from', () => {
    expect(secretFromEnv({}, 'X', read)).toEqual({ ok: true, value: undefined, from: 'unset' })
    expect(secretFromEnv({ X: 'v' }, 'X', read)).toEqual({ ok: true, value: 'v', from: 'env' })
    expect(secretFromEnv({ X_FILE: '/run/secrets/key' }, 'X', read)).toEqual({ ok: true, value: 'from-file', from: 'file' })
  })
})
