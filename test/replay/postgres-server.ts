/**
 * A PostgreSQL server of the test's own: initdb and pg_ctl of Debian's
 * `postgresql` package (scripts/prepare-test.ts installs it) into a temporary
 * directory, on a free port of 127.0.0.1, trust authentication. A system
 * PostgreSQL that may be running on the machine is never used. As root the
 * server runs as the `postgres` user (initdb refuses root).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@tep/local-stack'

export interface PostgresServer {
  url: string
  port: number
  stop(): Promise<void>
}

function binDir(): string {
  const given = process.env.PG_BIN?.trim()
  if (given) return given
  const versions = readdirSync('/usr/lib/postgresql')
    .filter((v) => /^[0-9]+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
  if (versions[0] === undefined)
    throw new Error('no PostgreSQL server under /usr/lib/postgresql; run npm test (its pretest installs it) or set PG_BIN')
  return `/usr/lib/postgresql/${versions[0]}/bin`
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = binDir()
  const dir = mkdtempSync(join(tmpdir(), 'tep-pg-'))
  const data = join(dir, 'data')
  const asRoot = process.getuid?.() === 0
  const run = (cmd: string, args: string[]): void => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]
    const result = spawnSync(file, argv, { encoding: 'utf8' })
    if (result.status !== 0)
      throw new Error(`${cmd} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`)
  }
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
  }
  run(`${bin}/initdb`, ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  run(`${bin}/pg_ctl`, [
    '-D',
    data,
    '-l',
    join(dir, 'server.log'),
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    '-w',
    '-t',
    '60',
    'start',
  ])
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      try {
        run(`${bin}/pg_ctl`, ['-D', data, '-m', 'immediate', '-w', 'stop'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}
