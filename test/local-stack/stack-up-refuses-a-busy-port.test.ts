import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { choosePorts } from '@tep/local-stack'
import { afterAll, beforeAll, expect, it } from 'vitest'

const CLI = fileURLToPath(new URL('../../deploy/local/src/cli.ts', import.meta.url))

let root: string
let blocker: net.Server
let busyPort: number

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tep-cli-busy-'))
  blocker = net.createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  busyPort = (blocker.address() as net.AddressInfo).port
})

afterAll(async () => {
  await new Promise((resolve) => blocker.close(resolve))
  await rm(root, { recursive: true, force: true })
})

it('stack:up names the busy port and its variable, exits non-zero and starts nothing', async () => {
  const { registry } = await choosePorts()
  const stateDir = path.join(root, 'stack')
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'up'],
      {
        env: {
          ...process.env,
          STACK_DIR: stateDir,
          STACK_KAFKA_PORT: String(busyPort),
          STACK_REGISTRY_PORT: String(registry),
        },
        timeout: 240_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    )
  })
  expect(result.code).toBe(1)
  expect(result.stdout).toBe('')
  expect(result.stderr).toContain(`error PORT_BUSY: port ${busyPort} (Kafka broker)`)
  expect(result.stderr).toContain('STACK_KAFKA_PORT')
  expect(existsSync(path.join(stateDir, 'stack.json'))).toBe(false)
})
