import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, inject, it } from 'vitest'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

// `npm start` is the newcomer's first command: this runs its script against the
// test stack for a while and requires that enriched events flowed and that every
// service reported ready at the end (scripts/start.ts --expect-flow decides both).
describe('npm start', () => {
  it('runs the simulators and every service, and enriched events flow', async () => {
    const child = spawn(process.execPath, ['scripts/start.ts', '--duration', '35', '--rate', '30', '--expect-flow'], {
      cwd: repoRoot,
      env: { ...process.env, KAFKA_BROKERS: inject('kafkaBrokers').join(','), SCHEMA_REGISTRY_URL: inject('registryUrl'), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    const [code] = (await once(child, 'exit')) as [number | null]
    expect(code, output.slice(-4000)).toBe(0)
    expect(output).toMatch(/transaction-ingest started/)
    expect(output).toMatch(/MATCHED [1-9]/)
  }, 150_000)
})
