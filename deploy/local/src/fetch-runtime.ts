import { spawn } from 'node:child_process'
import { createWriteStream, existsSync } from 'node:fs'
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { LocalStackError } from './errors.ts'
import { acquireLock } from './file-lock.ts'
import {
  APICURIO_VERSION,
  DEFAULT_CACHE_DIR,
  DEPENDENCY_PLUGIN,
  KAFKA_RUNTIME_POM,
  KAFKA_VERSION,
  runtimePaths,
  type RuntimePaths,
} from './versions.ts'

export interface FetchRuntimeOptions {
  /** Defaults to `<repo>/.cache` (git-ignored). */
  cacheDir?: string
  /** Progress lines; defaults to stderr. Pass `() => {}` to silence. */
  log?: (line: string) => void
  /** Give up waiting for another process's fetch after this long. Default 15 min. */
  lockTimeoutMs?: number
}

export interface FetchReport {
  paths: RuntimePaths
  /** Which pieces were downloaded now (empty when everything was cached). */
  fetched: Array<'kafka' | 'apicurio'>
}

const OK = '.ok'
const PROGRESS_EVERY_MS = 10_000

/** True when both runtimes are unpacked and marked complete. */
export function isRuntimeCached(cacheDir: string = DEFAULT_CACHE_DIR): boolean {
  const p = runtimePaths(cacheDir)
  return existsSync(path.join(p.kafkaDir, OK)) && existsSync(path.join(p.apicurioDir, OK))
}

/**
 * Fetches Kafka's broker jars and the Apicurio registry from Maven Central with
 * Maven, into `cacheDir`. Each piece is marked with a `.ok` file once complete and
 * is never fetched again; a lock file makes concurrent callers (two terminals, CI
 * steps) wait for one fetch instead of racing into the same folders.
 */
export async function fetchRuntime(options: FetchRuntimeOptions = {}): Promise<FetchReport> {
  const paths = runtimePaths(options.cacheDir ?? DEFAULT_CACHE_DIR)
  const log = options.log ?? ((line: string) => process.stderr.write(`[local-stack] ${line}\n`))
  if (isRuntimeCached(paths.cacheDir)) return { paths, fetched: [] }

  await mkdir(paths.cacheDir, { recursive: true })
  const lock = await acquireLock(path.join(paths.cacheDir, '.fetch.lock'), {
    timeoutMs: options.lockTimeoutMs ?? 15 * 60_000,
    onWait: (pid) => log(`another fetch (pid ${pid}) is running; waiting for it to finish`),
  })
  try {
    const fetched: FetchReport['fetched'] = []
    // Re-check under the lock: the process we waited for may have done the work.
    if (!existsSync(path.join(paths.kafkaDir, OK))) {
      await assertMavenAvailable()
      await fetchKafka(paths, log)
      fetched.push('kafka')
    }
    if (!existsSync(path.join(paths.apicurioDir, OK))) {
      await assertMavenAvailable()
      await fetchApicurio(paths, log)
      fetched.push('apicurio')
    }
    return { paths, fetched }
  } finally {
    await lock.release()
  }
}

async function fetchKafka(paths: RuntimePaths, log: (line: string) => void): Promise<void> {
  log(`fetching Apache Kafka ${KAFKA_VERSION} broker jars from Maven Central into ${paths.kafkaLib}`)
  const started = Date.now()
  await rm(paths.kafkaDir, { recursive: true, force: true })
  await mkdir(paths.kafkaLib, { recursive: true })
  await runMaven(
    paths,
    [
      '-f',
      KAFKA_RUNTIME_POM,
      `${DEPENDENCY_PLUGIN}:copy-dependencies`,
      '-DincludeScope=runtime',
      // Must be absolute: Maven resolves a relative outputDirectory against the pom's folder.
      `-DoutputDirectory=${paths.kafkaLib}`,
    ],
    `Kafka ${KAFKA_VERSION}`,
    log,
  )
  const jars = (await readdir(paths.kafkaLib)).filter((f) => f.endsWith('.jar'))
  if (!jars.some((j) => j.startsWith(`kafka_2.13-${KAFKA_VERSION}`))) {
    throw new LocalStackError(
      `Maven finished but ${paths.kafkaLib} holds no kafka_2.13-${KAFKA_VERSION}.jar`,
      {
        code: 'FETCH_FAILED',
        details: { jars: jars.length },
      },
    )
  }
  const bytes = await dirSize(paths.kafkaLib)
  await writeMarker(paths.kafkaDir, { version: KAFKA_VERSION, jars: jars.length, bytes })
  log(`Kafka ${KAFKA_VERSION}: ${jars.length} jars, ${mb(bytes)} in ${seconds(started)}`)
}

async function fetchApicurio(paths: RuntimePaths, log: (line: string) => void): Promise<void> {
  const coords = `io.apicurio:apicurio-registry-app:${APICURIO_VERSION}:tar.gz:all`
  log(`fetching Apicurio Registry ${APICURIO_VERSION} (${coords}) from Maven Central`)
  const started = Date.now()
  // `get` leaves the archive only in the Maven repository, so it is stored once, not twice.
  await runMaven(
    paths,
    [`${DEPENDENCY_PLUGIN}:get`, `-Dartifact=${coords}`, '-Dtransitive=false'],
    `Apicurio ${APICURIO_VERSION}`,
    log,
  )
  const archive = path.join(
    paths.mavenRepo,
    'io/apicurio/apicurio-registry-app',
    APICURIO_VERSION,
    `apicurio-registry-app-${APICURIO_VERSION}-all.tar.gz`,
  )
  if (!existsSync(archive)) {
    throw new LocalStackError(`Maven finished but the archive is not where expected: ${archive}`, {
      code: 'FETCH_FAILED',
    })
  }
  const archiveBytes = (await stat(archive)).size
  log(`unpacking ${path.basename(archive)} (${mb(archiveBytes)}) into ${paths.apicurioDir}`)
  // Unpack beside the target and rename, so a half-unpacked folder is never mistaken for a complete one.
  const partial = `${paths.apicurioDir}.partial-${process.pid}`
  await rm(partial, { recursive: true, force: true })
  await mkdir(partial, { recursive: true })
  await runCommand(
    'tar',
    ['-xzf', archive, '-C', partial],
    path.join(paths.cacheDir, 'fetch-apicurio-tar.log'),
  )
  if (!existsSync(path.join(partial, 'quarkus-run.jar'))) {
    throw new LocalStackError(`${archive} does not contain quarkus-run.jar; is it the "all" assembly?`, {
      code: 'FETCH_FAILED',
    })
  }
  await rm(paths.apicurioDir, { recursive: true, force: true })
  await rename(partial, paths.apicurioDir)
  const bytes = await dirSize(paths.apicurioDir)
  await writeMarker(paths.apicurioDir, { version: APICURIO_VERSION, archiveBytes, bytes })
  log(
    `Apicurio ${APICURIO_VERSION}: ${mb(archiveBytes)} download, ${mb(bytes)} unpacked, in ${seconds(started)}`,
  )
}

let mavenChecked = false

async function assertMavenAvailable(): Promise<void> {
  if (mavenChecked) return
  try {
    await runCommand('mvn', ['-v'])
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT'
    throw new LocalStackError(
      missing
        ? 'Apache Maven (`mvn`) is not on PATH; it fetches Kafka and the registry from Maven Central. ' +
            'Install it (Debian/Ubuntu: apt-get install maven; macOS: brew install maven) and re-run.'
        : `\`mvn -v\` failed, so Maven cannot run (it needs a Java runtime: set JAVA_HOME). ${(err as Error).message}`,
      { code: 'MAVEN_NOT_FOUND', cause: err },
    )
  }
  mavenChecked = true
}

const NETWORK_FAILURE =
  /Unknown host|UnknownHostException|Connection refused|Connect to .* timed out|Network is unreachable|No route to host|Could not transfer artifact/i

async function runMaven(paths: RuntimePaths, args: string[], what: string, log: (line: string) => void) {
  const logFile = path.join(paths.cacheDir, `fetch-${what.split(' ')[0]!.toLowerCase()}.log`)
  const fullArgs = ['-B', '-ntp', `-Dmaven.repo.local=${paths.mavenRepo}`, ...args]
  // Downloads can take minutes on a slow line; say that we are alive and how far we are.
  let running = true
  const timer = setInterval(() => {
    void dirSize(paths.mavenRepo).then(
      // The size walk can outlast Maven; a late line would claim a finished fetch is still running.
      (b) => running && log(`  still fetching ${what}... Maven repository now ${mb(b)}`),
      () => {},
    )
  }, PROGRESS_EVERY_MS)
  try {
    await runCommand('mvn', fullArgs, logFile)
  } catch (err) {
    const output = (err as CommandError).output ?? ''
    const tail = output
      .split('\n')
      .filter((l) => l.includes('ERROR'))
      .slice(-8)
      .join('\n')
    if (NETWORK_FAILURE.test(output)) {
      const host = /Unknown host ([^\s:]+)/.exec(output)?.[1] ?? 'repo.maven.apache.org'
      throw new LocalStackError(
        `Cannot reach Maven Central (${host}) to fetch ${what}. Check the network or proxy ` +
          `(Maven reads proxies from ~/.m2/settings.xml), or copy a filled ${paths.cacheDir} from a machine that ` +
          `has one. Maven said:\n${tail}\nFull log: ${logFile}`,
        { code: 'MAVEN_CENTRAL_UNREACHABLE', retriable: true, cause: err, details: { logFile } },
      )
    }
    throw new LocalStackError(`Maven failed to fetch ${what}:\n${tail}\nFull log: ${logFile}`, {
      code: 'FETCH_FAILED',
      cause: err,
      details: { logFile },
    })
  } finally {
    running = false
    clearInterval(timer)
  }
}

interface CommandError extends Error {
  output?: string
}

/** Runs a command, keeping its combined output (and a copy in `logFile`); rejects on a non-zero exit. */
function runCommand(cmd: string, args: string[], logFile?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const file = logFile ? createWriteStream(logFile) : undefined
    let output = ''
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.length > 2_000_000) output = output.slice(-1_000_000)
      file?.write(chunk)
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    child.on('error', (err) => {
      file?.end()
      reject(err)
    })
    child.on('close', (code) => {
      file?.end()
      if (code === 0) resolve(output)
      else reject(Object.assign(new Error(`${cmd} exited with code ${code}`), { output }))
    })
  })
}

async function writeMarker(dir: string, info: Record<string, unknown>): Promise<void> {
  await writeFile(path.join(dir, OK), JSON.stringify({ ...info, fetchedAt: new Date().toISOString() }) + '\n')
}

async function dirSize(dir: string): Promise<number> {
  let total = 0
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      total += (await stat(path.join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size
  }
  return total
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`
