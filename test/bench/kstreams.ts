/**
 * The bench's Kafka Streams peer (kstreams/src/IdentityEos.java): fetched and
 * compiled on first use into .cache/kstreams-bench, the way the local stack
 * gets Kafka (Maven's dependency plugin against a pom that is never built, so
 * nothing but Maven Central and the JDK is needed), then reused while the pom
 * and the source are unchanged.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { DEFAULT_CACHE_DIR, DEPENDENCY_PLUGIN, findJava, runtimePaths } from '@tep/local-stack'
import { repoRoot } from './harness.ts'

const run = promisify(execFile)
const SOURCE_DIR = path.join(repoRoot, 'test/bench/kstreams')
const POM = path.join(SOURCE_DIR, 'pom.xml')
const SOURCE = path.join(SOURCE_DIR, 'src/IdentityEos.java')

export interface KafkaStreamsBench {
  java: string
  /** The class path: compiled classes and every runtime jar. */
  classPath: string
  mainClass: string
}

/** Builds the program if the pom or the source changed since the last build. */
export async function kafkaStreamsBench(say: (line: string) => void): Promise<KafkaStreamsBench> {
  const dir = path.join(DEFAULT_CACHE_DIR, 'kstreams-bench')
  const lib = path.join(dir, 'lib')
  const classes = path.join(dir, 'classes')
  const marker = path.join(dir, 'built-from')
  const digest = createHash('sha256').update(readFileSync(POM)).update(readFileSync(SOURCE)).digest('hex')
  // Kafka Streams 4 needs Java 17.
  const java = await findJava({ min: 17, homeVars: ['JAVA_HOME'], purpose: 'the Kafka Streams peer of the bench' })
  const javac = path.isAbsolute(java.bin) ? path.join(path.dirname(java.bin), 'javac') : 'javac'
  const result = { java: java.bin, classPath: `${classes}${path.delimiter}${lib}/*`, mainClass: 'IdentityEos' }
  if (existsSync(marker) && readFileSync(marker, 'utf8') === digest) return result
  say('  building the Kafka Streams peer (Maven Central jars, javac) ...')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(classes, { recursive: true })
  const started = Date.now()
  try {
    await run('mvn', ['-B', '-ntp', '-q', `-Dmaven.repo.local=${runtimePaths().mavenRepo}`, '-f', POM, `${DEPENDENCY_PLUGIN}:copy-dependencies`, `-DoutputDirectory=${lib}`, '-DincludeScope=runtime'], { maxBuffer: 16 * 1024 * 1024 })
    if (path.isAbsolute(javac) && !existsSync(javac)) throw new Error(`no javac beside ${java.bin}: the Kafka Streams peer needs a JDK, not only a JRE`)
    await run(javac, ['-d', classes, '-cp', `${lib}/*`, SOURCE], { maxBuffer: 16 * 1024 * 1024 })
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string }
    throw new Error(`building the Kafka Streams peer failed: ${e.message}\n${(e.stdout ?? '').slice(-2000)}${(e.stderr ?? '').slice(-2000)}`, { cause: err })
  }
  writeFileSync(marker, digest)
  say(`  Kafka Streams peer built in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return result
}
