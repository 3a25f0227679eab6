import { describe, expect, it } from 'vitest'
import { envDocProblems } from './env-docs.ts'
import { envVar } from './env-spec.ts'
import { duration, nonEmpty, port } from './parsers.ts'

const spec = {
  POLL: envVar(duration, 'poll interval', { default: '5m' }),
  PORT: envVar(port, 'port', { default: '9464' }),
  USER: envVar(nonEmpty, 'user', { default: 'sim-user' }),
  PASSWORD: envVar(nonEmpty, 'password', { default: 'sim-password', secret: true }),
  TOKEN_URL: envVar(nonEmpty, 'token URL', { optional: true }),
}

describe('envDocProblems', () => {
  it('accepts a README whose tables name every variable with its default', () => {
    const readme = [
      '| variable | meaning | default |',
      '|---|---|---|',
      '| `POLL` | poll interval | `5m` |',
      '|  `PORT`   |  port  |  `9464`  |',
      '| `USER` / `PASSWORD` | `sim-user` / (built-in) | Basic user |',
      '| `TOKEN_URL` | token URL | (unset) |',
    ].join('\n')
    expect(envDocProblems(readme, spec)).toEqual([])
  })

  it('names each missing variable and each row with a stale default', () => {
    const readme = ['| `POLL` | poll interval | `15m` |', '| `USER` | user | `sim-user` |', 'Also `PORT` in prose, which is not a table.'].join('\n')
    expect(envDocProblems(readme, spec)).toEqual([
      'POLL: its row does not show the default `5m`',
      'PORT: no table row names it',
      'PASSWORD: no table row names it',
      'TOKEN_URL: no table row names it',
    ])
  })
})
