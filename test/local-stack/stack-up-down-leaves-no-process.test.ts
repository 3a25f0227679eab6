import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { choosePorts } from '@tep/local-stack'
import { Admin } from '@platformatic/kafka'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// `npm run stack:up` / `stack:down` as a user runs them, on a second, isolated stack
// (own state dir, own ports) so it neither touches nor depends on the suite's stack.
const CLI = fileURLToPath(new URL('../../deploy/local/src/cli.ts', import.meta.url))

interface CliResult {
  code: number
  stdout: string
  stderr: string
}

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 240_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

/** Alive and not a zombie; our own reading of /proc, independent of the code under test. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3))
  } catch {
    return false
  }
}

describe('npm run stack:up / stack:down', () => {
  let root: string
  let env: NodeJS.ProcessEnv
  let kafkaPort: number
  let registryPort: number

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'tep-cli-stack-'))
    const ports = await choosePorts()
    kafkaPort = ports.kafka
    registryPort = ports.registry
    env = {
      ...process.env,
      STACK_DIR: path.join(root, 'stack'),
      STACK_KAFKA_PORT: String(kafkaPort),
      STACK_REGISTRY_PORT: String(registryPort),
    }
  })

  afterAll(async () => {
    // If an assertion failed half-way, still leave nothing running.
    if (env) await runCli(['down'], env)
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('starts once, reports the same stack on a second up, and down twice leaves no process', async () => {
    const expectedLines = `KAFKA_BROKERS=127.0.0.1:${kafkaPort}\nSCHEMA_REGISTRY_URL=http://127.0.0.1:${registryPort}/apis/ccompat/v7\n`

    const first = await runCli(['up'], env)
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toBe(expectedLines)
    expect(await readFile(path.join(root, 'stack', 'stack.env'), 'utf8')).toBe(expectedLines)

    const record = JSON.parse(await readFile(path.join(root, 'stack', 'stack.json'), 'utf8')) as {
      kafkaPid: number
      registryPid: number
    }
    const pids = [record.kafkaPid, record.registryPid]
    expect(pids.every(alive)).toBe(true)
    expect(readFileSync(`/proc/${record.kafkaPid}/cmdline`, 'utf8')).toContain('kafka.Kafka')
    expect(readFileSync(`/proc/${record.registryPid}/cmdline`, 'utf8')).toContain('quarkus-run.jar')

    const second = await runCli(['up'], env)
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toBe(expectedLines)
    expect(second.stderr).toContain('already running')
    const recordAfter = JSON.parse(
      await readFile(path.join(root, 'stack', 'stack.json'), 'utf8'),
    ) as typeof record
    expect([recordAfter.kafkaPid, recordAfter.registryPid]).toEqual(pids)

    // The broker serves metadata and the registry stores and returns a schema.
    const admin = new Admin({ clientId: 'stack-probe', bootstrapBrokers: [`127.0.0.1:${kafkaPort}`] })
    try {
      const cluster = await admin.metadata({ topics: [], forceUpdate: true })
      expect([...cluster.brokers.values()].map((b) => b.port)).toEqual([kafkaPort])
    } finally {
      await admin.close()
    }
    const registry = `http://127.0.0.1:${registryPort}/apis/ccompat/v7`
    const schema = JSON.stringify({ type: 'record', name: 'Probe', fields: [{ name: 'id', type: 'string' }] })
    const registered = await fetch(`${registry}/subjects/probe-value/versions`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema }),
    })
    expect(registered.status).toBe(200)
    const { id } = (await registered.json()) as { id: number }
    const fetched = (await (await fetch(`${registry}/schemas/ids/${id}`)).json()) as { schema: string }
    expect(JSON.parse(fetched.schema)).toEqual(JSON.parse(schema))

    const status = await runCli(['status'], env)
    expect(status.code, status.stderr).toBe(0)

    const down = await runCli(['down'], env)
    expect(down.code, down.stderr).toBe(0)
    expect(down.stderr).toContain(`stopped kafka (pid ${record.kafkaPid}`)
    expect(down.stderr).toContain(`stopped registry (pid ${record.registryPid}`)
    const downAgain = await runCli(['down'], env)
    expect(downAgain.code, downAgain.stderr).toBe(0)
    expect(downAgain.stderr).toContain('not running')

    expect(pids.filter(alive)).toEqual([])
    expect(existsSync(path.join(root, 'stack'))).toBe(false)
    expect((await runCli(['status'], env)).code).toBe(3)
  }, 300_000)
})
