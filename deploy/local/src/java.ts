import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { LocalStackError } from './errors.ts'

const run = promisify(execFile)

export interface JavaRuntime {
  /** Absolute path of the `java` binary (or `java` when found on PATH). */
  bin: string
  /** Feature release, e.g. 17, 21, 25. */
  major: number
  /** Where it was found, for messages: `$JAVA_HOME`, `PATH`, `/usr/lib/jvm/...`. */
  source: string
}

/** Parses the feature release out of `java -version` output ("1.8.0_402" → 8, "25.0.1" → 25, "21" → 21). */
export function parseJavaMajor(versionOutput: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?[^"]*"/.exec(versionOutput)
  if (!m) return undefined
  const first = Number(m[1])
  return first === 1 && m[2] !== undefined ? Number(m[2]) : first
}

async function probe(bin: string): Promise<number | undefined> {
  try {
    // `java -version` writes to stderr; a 10 s cap keeps a wedged binary from hanging us.
    const { stdout, stderr } = await run(bin, ['-version'], { timeout: 10_000 })
    return parseJavaMajor(stderr + stdout)
  } catch {
    return undefined
  }
}

function candidates(
  envVars: readonly string[],
  env: NodeJS.ProcessEnv,
): Array<{ bin: string; source: string }> {
  const list: Array<{ bin: string; source: string }> = []
  for (const name of envVars) {
    const home = env[name]
    if (home) list.push({ bin: path.join(home, 'bin', 'java'), source: `$${name}` })
  }
  list.push({ bin: 'java', source: 'PATH' })
  const jvmRoot = '/usr/lib/jvm'
  if (existsSync(jvmRoot)) {
    for (const dir of readdirSync(jvmRoot).sort()) {
      const bin = path.join(jvmRoot, dir, 'bin', 'java')
      if (existsSync(bin)) list.push({ bin, source: bin })
    }
  }
  return list
}

export interface FindJavaOptions {
  /** Lowest acceptable feature release. */
  min: number
  /** Environment variables naming a JDK/JRE home, checked first, in order. */
  homeVars: readonly string[]
  /** What needs it, for the error message ("the schema registry (Apicurio 3.3.3)"). */
  purpose: string
  env?: NodeJS.ProcessEnv
}

/**
 * Finds a Java runtime of at least `min`: the named home variables first, then
 * `java` on PATH, then every JDK under /usr/lib/jvm. The first acceptable one wins,
 * so an explicit `*_JAVA_HOME` always beats whatever the machine defaults to.
 */
export async function findJava(options: FindJavaOptions): Promise<JavaRuntime> {
  const seen: string[] = []
  const probed = new Set<string>()
  for (const c of candidates(options.homeVars, options.env ?? process.env)) {
    if (probed.has(c.bin)) continue
    probed.add(c.bin)
    const major = await probe(c.bin)
    if (major === undefined) continue
    seen.push(`Java ${major} (${c.source})`)
    if (major >= options.min) return { bin: c.bin, major, source: c.source }
  }
  const found = seen.length > 0 ? `found only ${seen.join(', ')}` : 'found no java at all'
  throw new LocalStackError(
    `${options.purpose} needs Java ${options.min} or newer, but ${found}. ` +
      `Install a JDK/JRE ${options.min}+ (e.g. Eclipse Temurin from adoptium.net, or your package manager's ` +
      `openjdk-${options.min}-jre-headless) and point ${options.homeVars[0]} or JAVA_HOME at it.`,
    { code: 'JAVA_NOT_FOUND', details: { min: options.min, seen } },
  )
}
