import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalStackError } from './errors.ts'
import { isProcessRunning } from './process-control.ts'
import { newClusterId, startStack } from './stack.ts'
import { runtimePaths } from './versions.ts'

// The failure paths of startStack, with shell scripts standing in for `java`:
// no JVM starts, so these run in the unit project.
describe('startStack when a process fails', () => {
  let dir: string
  let cacheDir: string

  async function script(name: string, body: string): Promise<string> {
    const file = path.join(dir, name)
    await writeFile(file, `#!/bin/sh\n${body}\n`)
    await chmod(file, 0o755)
    return file
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'start-stack-'))
    cacheDir = path.join(dir, 'cache')
    const paths = runtimePaths(cacheDir)
    for (const d of [paths.kafkaDir, paths.apicurioDir]) {
      await mkdir(d, { recursive: true })
      await writeFile(path.join(d, '.ok'), '{}')
    }
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('rejects with the broker log tail when the broker exits, and stops the registry it started', async () => {
    // Formatting succeeds; the broker itself dies at once, as with a bad config.
    const kafkaJava = await script(
      'kafka-java',
      'case "$*" in *StorageTool*) echo "Formatting"; exit 0;; esac\n' +
        'echo "ERROR Exiting Kafka due to fatal exception: boom-marker"; exit 1',
    )
    // A "registry" that would run forever; exec so that its pid is the one recorded.
    const registryJava = await script('registry-java', 'exec sleep 300')
    const stateDir = path.join(dir, 'state-broker-dies')

    const error = await startStack({
      stateDir,
      cacheDir,
      kafkaJava,
      registryJava,
      startTimeoutMs: 60_000,
    }).catch((e: unknown) => e)

    expect(error).toBeInstanceOf(LocalStackError)
    expect((error as LocalStackError).code).toBe('STARTUP_FAILED')
    expect((error as LocalStackError).message).toContain('Kafka broker')
    expect((error as LocalStackError).message).toContain('exited with code 1')
    expect((error as LocalStackError).message).toContain('boom-marker')
    const record = JSON.parse(await readFile(path.join(stateDir, 'stack.json'), 'utf8')) as {
      registryPid: number
    }
    expect(isProcessRunning(record.registryPid)).toBe(false)
    // Logs stay for the post-mortem; the data dir does not.
    expect(existsSync(path.join(stateDir, 'kafka.log'))).toBe(true)
    expect(existsSync(path.join(stateDir, 'data'))).toBe(false)
  })

  it('rejects with STARTUP_TIMEOUT when a process runs but never answers', async () => {
    const kafkaJava = await script(
      'kafka-java-silent',
      'case "$*" in *StorageTool*) exit 0;; esac\nexec sleep 300',
    )
    const registryJava = await script('registry-java-silent', 'exec sleep 300')
    const error = await startStack({
      stateDir: path.join(dir, 'state-timeout'),
      cacheDir,
      kafkaJava,
      registryJava,
      startTimeoutMs: 1_500,
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LocalStackError)
    expect((error as LocalStackError).code).toBe('STARTUP_TIMEOUT')
    expect((error as LocalStackError).message).toMatch(/did not answer within 2 s/)
  })

  it('refuses to start without a fetched runtime and names the command that fetches it', async () => {
    const error = await startStack({
      stateDir: path.join(dir, 'state-empty'),
      cacheDir: path.join(dir, 'empty'),
    }).catch((e: unknown) => e)
    expect((error as LocalStackError).code).toBe('RUNTIME_MISSING')
    expect((error as LocalStackError).message).toContain('npm run stack:fetch')
  })
})

describe('newClusterId', () => {
  it('never starts with "-", which the format tool would read as an option', () => {
    // base64url of 0xf8... starts with '-'; the second draw does not.
    const draws = [Buffer.alloc(16, 0xf8), Buffer.alloc(16, 0x01)]
    const id = newClusterId(() => draws.shift()!)
    expect(Buffer.alloc(16, 0xf8).toString('base64url').startsWith('-')).toBe(true)
    expect(id).toBe(Buffer.alloc(16, 0x01).toString('base64url'))
    expect(id).toHaveLength(22)
  })
})
