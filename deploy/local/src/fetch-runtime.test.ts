import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { LocalStackError } from './errors.ts'
import { fetchRuntime } from './fetch-runtime.ts'
import { runtimePaths } from './versions.ts'

// Each case runs against a fake `mvn` on a private PATH: no network, no real Maven.
describe('fetchRuntime', () => {
  let dir: string
  const originalPath = process.env.PATH

  async function fakeMaven(script: string): Promise<string> {
    const bin = await mkdtemp(path.join(dir, 'bin-'))
    await writeFile(path.join(bin, 'mvn'), `#!/bin/sh\n${script}\n`)
    await chmod(path.join(bin, 'mvn'), 0o755)
    return bin
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'fetch-runtime-'))
  })
  afterEach(() => {
    process.env.PATH = originalPath
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('uses a cached runtime without running Maven at all', async () => {
    const cacheDir = await mkdtemp(path.join(dir, 'cache-'))
    const paths = runtimePaths(cacheDir)
    for (const d of [paths.kafkaDir, paths.apicurioDir]) {
      await mkdir(d, { recursive: true })
      await writeFile(path.join(d, '.ok'), '{}')
    }
    process.env.PATH = await fakeMaven('echo "maven must not run" >&2; exit 1')
    const report = await fetchRuntime({ cacheDir, log: () => {} })
    expect(report.fetched).toEqual([])
  })

  it('says that Maven is missing, and how to install it', async () => {
    process.env.PATH = await mkdtemp(path.join(dir, 'empty-'))
    const error = await fetchRuntime({
      cacheDir: await mkdtemp(path.join(dir, 'cache-')),
      log: () => {},
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LocalStackError)
    expect((error as LocalStackError).code).toBe('MAVEN_NOT_FOUND')
    expect((error as LocalStackError).message).toContain('apt-get install maven')
  })

  it('reports an unreachable Maven Central as such, with the host, and leaves no completion marker', async () => {
    process.env.PATH = await fakeMaven(
      [
        'if [ "$1" = "-v" ]; then echo "Apache Maven 3.8.7"; exit 0; fi',
        'echo "[ERROR] Failed to execute goal on project kafka-runtime: Could not resolve dependencies: ' +
          'Could not transfer artifact org.apache.kafka:kafka_2.13:pom:3.9.2 from/to central ' +
          '(https://repo.maven.apache.org/maven2): Unknown host repo.maven.apache.org"',
        'exit 1',
      ].join('\n'),
    )
    const cacheDir = await mkdtemp(path.join(dir, 'cache-'))
    const error = await fetchRuntime({ cacheDir, log: () => {} }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LocalStackError)
    expect((error as LocalStackError).code).toBe('MAVEN_CENTRAL_UNREACHABLE')
    expect((error as LocalStackError).retriable).toBe(true)
    expect((error as LocalStackError).message).toContain('Cannot reach Maven Central (repo.maven.apache.org)')
    expect(existsSync(path.join(runtimePaths(cacheDir).kafkaDir, '.ok'))).toBe(false)
    // The lock is released, so the next attempt is not blocked.
    expect(existsSync(path.join(cacheDir, '.fetch.lock'))).toBe(false)
  })
})
