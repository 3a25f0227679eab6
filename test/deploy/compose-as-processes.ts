/**
 * Runs the services of docker-compose.yml as local processes, the way Docker
 * Compose would run their containers: each service's entrypoint + command with
 * the image's ENV and the service's `environment`, started in `depends_on` order
 * once its conditions hold, healthchecks run as written, stopped in reverse order
 * with SIGTERM and SIGKILL after `stop_grace_period`.
 *
 * What it maps, and nothing else (deploy/README.md, "Compose, as the test runs it"):
 *   - the image's WORKDIR is the repository root (the Dockerfile copies the repo's
 *     folders there; bind mounts `./x:<WORKDIR>/x` are checked to be that identity);
 *   - executables of the image are this machine's: `node` is this Node 24
 *     (process.execPath), image tools are the commands they wrap (`imageTools`);
 *   - a named volume is a fresh temp dir, and its container path is replaced by
 *     that dir where a value names it (environment, command);
 *   - services the caller provides itself (the broker and registry of a local
 *     stack) are not spawned; their healthchecks still run.
 * Compose's `${VAR}` interpolation is not implemented: a `$` in a run string is refused.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from '@tep/observability'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export type DependsOnCondition = 'service_started' | 'service_healthy' | 'service_completed_successfully'

export interface ComposeHealthcheck {
  test: string[] | string
  interval?: string
  timeout?: string
  retries?: number
  start_period?: string
}

export interface ComposeService {
  image?: string
  build?: { context: string; target?: string } | string
  entrypoint?: string[] | string
  command?: string[] | string
  environment?: Record<string, string | number | boolean | null> | string[]
  depends_on?: Record<string, { condition?: DependsOnCondition }> | string[]
  healthcheck?: ComposeHealthcheck
  profiles?: string[]
  volumes?: string[]
  ports?: string[]
  restart?: string
  stop_grace_period?: string
}

export interface ComposeFile {
  services: Record<string, ComposeService>
  volumes?: Record<string, unknown>
}

/** What a Dockerfile stage gives its containers: working directory, ENTRYPOINT, ENV. */
export interface ImageConfig {
  workdir: string
  entrypoint: string[]
  env: Record<string, string>
  /** What the stages COPY from the build context (repo-relative sources), e.g. `services`, `package.json`. */
  copied: string[]
}

/** Go durations as compose writes them ("5s", "1m30s", "500ms"), in ms. */
export function durationMs(text: string | undefined, fallbackMs: number): number {
  if (text === undefined) return fallbackMs
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)]
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
    throw new Error(`not a compose duration: "${text}"`)
  const unit: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }
  return parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2]!]!, 0)
}

/**
 * WORKDIR, ENTRYPOINT and ENV of `target` in a Dockerfile, following `FROM <stage>`
 * to the stages it builds on (later instructions win, as in Docker). Only the
 * forms this repo's Dockerfile uses: exec-form ENTRYPOINT, `ENV K=V ...` without quotes.
 */
export function imageConfig(dockerfile: string, target: string): ImageConfig {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  const stages = new Map<string, { base: string; instructions: string[] }>()
  let current: { base: string; instructions: string[] } | undefined
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line)
    if (from) {
      current = { base: from[1]!, instructions: [] }
      if (from[2]) stages.set(from[2], current)
    } else current?.instructions.push(line)
  }
  const chain: string[][] = []
  for (
    let name: string | undefined = target;
    name !== undefined && stages.has(name);
    name = stages.get(name)!.base
  )
    chain.unshift(stages.get(name)!.instructions)
  if (chain.length === 0) throw new Error(`the Dockerfile has no stage "${target}"`)
  const config: ImageConfig = { workdir: '/', entrypoint: [], env: {}, copied: [] }
  for (const line of chain.flat()) {
    const [keyword, ...rest] = line.split(/\s+/)
    const args = rest.join(' ')
    if (keyword === 'WORKDIR') config.workdir = path.posix.resolve(config.workdir, args)
    if (keyword === 'ENTRYPOINT') config.entrypoint = JSON.parse(args) as string[]
    // `COPY src... dest` from the build context (not --from another stage): every argument but the last.
    if (keyword === 'COPY' && !rest.some((a) => a.startsWith('--from')))
      config.copied.push(
        ...rest
          .filter((a) => !a.startsWith('--'))
          .slice(0, -1)
          .map((a) => path.posix.normalize(a)),
      )
    if (keyword === 'ENV')
      for (const pair of rest)
        config.env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1)
  }
  return config
}

export function dependsOn(s: ComposeService): Array<{ service: string; condition: DependsOnCondition }> {
  if (Array.isArray(s.depends_on))
    return s.depends_on.map((service) => ({ service, condition: 'service_started' }))
  return Object.entries(s.depends_on ?? {}).map(([service, d]) => ({
    service,
    condition: d.condition ?? 'service_started',
  }))
}

function environmentOf(s: ComposeService): Record<string, string> {
  if (Array.isArray(s.environment))
    return Object.fromEntries(
      s.environment.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    )
  return Object.fromEntries(
    Object.entries(s.environment ?? {})
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, String(v)]),
  )
}

function execForm(value: string[] | string | undefined, what: string): string[] | undefined {
  if (typeof value === 'string')
    throw new Error(
      `${what} is a string; this runner takes the exec form (a list) only, which is also what the image's ENTRYPOINT expects`,
    )
  return value
}

/** How one process is started: argv[0] already mapped to this machine's executable. */
export interface ProcessPlan {
  argv: string[]
  env: Record<string, string>
  cwd: string
}

export interface Mapping {
  /** Executables of the image by name, as argv prefixes on this machine. */
  imageTools: Record<string, string[]>
  /** Named volume → local directory. */
  volumeDirs: Record<string, string>
  /** The environment every process gets besides the image's and the service's (PATH, HOME). */
  baseEnv: Record<string, string>
}

/**
 * The local stand-in for a service's container: its argv and environment, with
 * exactly the mappings listed at the top of this file applied.
 */
export class ComposeMapper {
  private readonly compose: ComposeFile
  private readonly images: (s: ComposeService) => ImageConfig | undefined
  private readonly mapping: Mapping

  /** `images` gives the config of the images built here (the Dockerfile), undefined for pulled ones. */
  constructor(
    compose: ComposeFile,
    images: (s: ComposeService) => ImageConfig | undefined,
    mapping: Mapping,
  ) {
    this.compose = compose
    this.images = images
    this.mapping = mapping
  }

  /** A named volume's container path → its local dir; bind mounts must be the repo's own folder at the same place under WORKDIR. */
  private volumePaths(name: string, s: ComposeService): Array<[string, string]> {
    const workdir = this.images(s)?.workdir ?? '/'
    const out: Array<[string, string]> = []
    for (const v of s.volumes ?? []) {
      const [source, target] = v.split(':') as [string, string]
      if (source.startsWith('.') || source.startsWith('/')) {
        const local = path.resolve(repoRoot, source)
        const sameInImage = path.resolve(repoRoot, path.posix.relative(workdir, target))
        if (local !== sameInImage)
          throw new Error(
            `${name}: bind mount ${v} puts ${source} elsewhere than at its own place under WORKDIR ${workdir}; not mapped`,
          )
      } else {
        const dir = this.mapping.volumeDirs[source]
        if (dir === undefined || !(source in (this.compose.volumes ?? {})))
          throw new Error(`${name}: volume ${source} is neither declared in volumes: nor given a local dir`)
        out.push([target, dir])
      }
    }
    return out
  }

  private mapped(name: string, s: ComposeService, text: string): string {
    // Compose would interpolate ${VAR} / $VAR from the host's environment: not done here, so refused.
    if (text.includes('$'))
      throw new Error(`${name}: "${text}" contains $, which compose interpolates and this runner does not`)
    let out = text
    for (const [target, dir] of this.volumePaths(name, s))
      out = out.replace(
        new RegExp(`${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=/|$|\\s|['"])`, 'g'),
        dir,
      )
    return out
  }

  private executable(argv: string[], what: string): string[] {
    const [first, ...rest] = argv
    if (first === undefined) throw new Error(`${what}: nothing to run`)
    const tool = this.mapping.imageTools[first]
    if (tool === undefined)
      throw new Error(
        `${what}: runs "${first}", which is not among the image executables this runner maps (${Object.keys(this.mapping.imageTools).join(', ')})`,
      )
    return [...tool, ...rest]
  }

  /** The container's process: (service entrypoint ?? image ENTRYPOINT) + command, image ENV + environment. */
  service(name: string): ProcessPlan {
    const s = this.compose.services[name]!
    const image = this.images(s)
    if (image === undefined)
      throw new Error(
        `${name} runs image ${s.image}, which is not built from the Dockerfile: not a process here`,
      )
    const entrypoint = execForm(s.entrypoint, `${name}.entrypoint`) ?? image.entrypoint
    const command = execForm(s.command, `${name}.command`) ?? []
    // The repo root stands in for WORKDIR only where the image has the same files: a script the
    // command runs must be one the Dockerfile copies or a bind mount brings in.
    const present = [
      ...image.copied,
      ...(s.volumes ?? [])
        .map((v) => v.split(':')[0]!)
        .filter((src) => src.startsWith('.'))
        .map((src) => path.posix.normalize(src)),
    ]
    for (const file of command.filter((a) => /^[\w./-]+\.(?:ts|mts|js|mjs)$/.test(a)))
      if (!present.some((p) => file === p || file.startsWith(`${p}/`)))
        throw new Error(
          `${name}: runs ${file}, which the image does not contain (the Dockerfile copies ${image.copied.join(', ')})`,
        )
    return {
      argv: this.executable(
        [...entrypoint, ...command].map((a) => this.mapped(name, s, a)),
        name,
      ),
      env: this.env(name, s),
      cwd: repoRoot,
    }
  }

  private env(name: string, s: ComposeService): Record<string, string> {
    const own = Object.entries(environmentOf(s)).map(([k, v]) => [k, this.mapped(name, s, v)])
    return { ...this.mapping.baseEnv, ...this.images(s)?.env, ...Object.fromEntries(own) }
  }

  /** The healthcheck's `test` as a process: CMD runs its argv, CMD-SHELL `sh -c`; undefined for none/NONE. */
  healthcheck(name: string): ProcessPlan | undefined {
    const s = this.compose.services[name]!
    const test = s.healthcheck?.test
    if (test === undefined) return undefined
    const form = typeof test === 'string' ? ['CMD-SHELL', test] : test
    const [kind, ...args] = form.map((a) => this.mapped(name, s, a))
    if (kind === 'NONE') return undefined
    const argv = kind === 'CMD' ? args : kind === 'CMD-SHELL' ? ['sh', '-c', args.join(' ')] : undefined
    if (argv === undefined)
      throw new Error(`${name}: healthcheck test starts with ${kind}, not CMD / CMD-SHELL / NONE`)
    return { argv: this.executable(argv, `${name} healthcheck`), env: this.env(name, s), cwd: repoRoot }
  }
}

export interface ServiceProcess {
  name: string
  child: ChildProcess
  logFile: string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Set once a stop was asked for: an exit after it is expected. */
  stopping: boolean
}

/** Spawns `plan` in its own process group (killable as a whole), stdout and stderr into `logFile`. */
function spawnLogged(name: string, plan: ProcessPlan, logFile: string): ServiceProcess {
  const fd = openSync(logFile, 'a')
  const child = spawn(plan.argv[0]!, plan.argv.slice(1), {
    cwd: plan.cwd,
    env: plan.env,
    stdio: ['ignore', fd, fd],
    detached: true,
  })
  closeSync(fd)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
    // A spawn failure (ENOENT) has no exit event: reported as an exit with no code.
    child.once('error', () => resolve({ code: null, signal: null }))
  })
  return { name, child, logFile, exited, stopping: false }
}

export function tail(file: string, lines = 40): string {
  if (!existsSync(file)) return '(no output)'
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref())

/**
 * Brings services up as `docker compose up` does and down as `docker compose
 * down`/`stop` does, as local processes. Every process (services and healthcheck
 * runs) is tracked, so `killAll` can always end them.
 */
export class ComposeRun {
  readonly processes = new Map<string, ServiceProcess>()
  /** Healthcheck runs still going, killed by killAll as well. */
  private readonly probes = new Set<ChildProcess>()
  private readonly launched = new Map<string, Promise<void>>()
  private readonly healthy = new Map<string, Promise<void>>()
  private readonly compose: ComposeFile
  private readonly mapper: ComposeMapper
  private readonly logDir: string
  private readonly provided: Map<string, Promise<void>>
  private readonly logger: Logger
  /** Rejected by the first unexpected exit of a long-running service: everything awaiting races it. */
  readonly failure: Promise<never>
  private fail!: (error: Error) => void
  /** When each service was started, became healthy, or exited, in order: what depends_on ordering is checked on. */
  readonly timeline: Array<{
    service: string
    event: 'started' | 'healthy' | 'exited'
    at: number
    code?: number | null
  }> = []
  /** The last output of each service's failing healthcheck, for the diagnosis. */
  readonly lastProbeOutput = new Map<string, string>()

  constructor(options: {
    compose: ComposeFile
    mapper: ComposeMapper
    logDir: string
    provided: Map<string, Promise<void>>
    logger: Logger
  }) {
    this.compose = options.compose
    this.mapper = options.mapper
    this.logDir = options.logDir
    this.provided = options.provided
    this.logger = options.logger
    mkdirSync(this.logDir, { recursive: true })
    this.failure = new Promise<never>((_, reject) => (this.fail = reject))
    this.failure.catch(() => {}) // observed through guard(); never an unhandled rejection
  }

  /** `promise`, or the first unexpected exit, whichever comes first. */
  guard<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.failure])
  }

  private oneShot(name: string): boolean {
    return this.compose.services[name]!.restart === 'no'
  }

  /** Starts `name` once every depends_on condition holds (dependencies first, recursively). */
  launch(name: string): Promise<void> {
    const known = this.launched.get(name) ?? this.provided.get(name)
    if (known) return known
    const started = (async () => {
      await Promise.all(
        dependsOn(this.compose.services[name]!).map((d) => this.condition(d.service, d.condition, name)),
      )
      this.spawn(name)
    })()
    this.launched.set(name, started)
    return started
  }

  private spawn(name: string): void {
    const plan = this.mapper.service(name)
    const p = spawnLogged(name, plan, path.join(this.logDir, `${name}.log`))
    this.processes.set(name, p)
    this.timeline.push({ service: name, event: 'started', at: performance.now() })
    this.logger.info({ composeService: name, pid: p.child.pid, argv: plan.argv.slice(1, 3) }, 'started')
    void p.exited.then(({ code, signal }) => {
      this.timeline.push({ service: name, event: 'exited', at: performance.now(), code })
      this.logger.info({ composeService: name, code, signal }, 'exited')
      if (p.stopping || this.oneShot(name)) return
      // Any exit of a long-running service fails the run: a restart policy would hide a crash.
      this.fail(new Error(`${name} exited (code ${code}, signal ${signal}) while it should run; its log:\n${tail(p.logFile)}`))
    })
  }

  private async condition(dep: string, condition: DependsOnCondition, by: string): Promise<void> {
    await this.launch(dep)
    if (condition === 'service_healthy') return this.waitHealthy(dep)
    if (condition === 'service_completed_successfully') {
      const p = this.processes.get(dep)
      if (!p) throw new Error(`${by} waits for ${dep} to complete, but ${dep} is not a process here`)
      const { code, signal } = await p.exited
      if (code !== 0)
        throw new Error(
          `${dep} did not complete successfully (code ${code}, signal ${signal}), so ${by} cannot start; its log:\n${tail(p.logFile)}`,
        )
    }
  }

  /**
   * Runs the healthcheck until it passes, as Docker does: failures within
   * start_period do not count, `retries` consecutive ones afterwards make the
   * service unhealthy. The first run is at once and runs are at most 2 s apart
   * (Docker waits `interval` before each: up to 10 s here, which only costs time).
   */
  waitHealthy(name: string): Promise<void> {
    const known = this.healthy.get(name)
    if (known) return known
    const check = (async () => {
      const hc = this.compose.services[name]!.healthcheck
      const plan = this.mapper.healthcheck(name)
      if (hc === undefined || plan === undefined)
        throw new Error(`${name} is waited for as service_healthy but has no healthcheck`)
      const interval = durationMs(hc.interval, 30_000)
      const timeout = durationMs(hc.timeout, 30_000)
      const startPeriodEnds = Date.now() + durationMs(hc.start_period, 0)
      const retries = hc.retries ?? 3
      let failures = 0
      for (let run = 1; ; run++) {
        // An exit meanwhile is reported by `failure` (callers guard), or restarted for a known cause.
        const result = await this.probe(plan, timeout)
        if (result.ok) {
          this.timeline.push({ service: name, event: 'healthy', at: performance.now() })
          this.logger.info({ composeService: name, run }, 'healthy')
          return
        }
        this.lastProbeOutput.set(name, result.output)
        if (Date.now() >= startPeriodEnds && ++failures >= retries)
          throw new Error(
            `${name} is unhealthy: ${retries} healthchecks failed in a row; the last said: ${result.output}${this.processes.has(name) ? `\nits log:\n${tail(this.processes.get(name)!.logFile)}` : ''}`,
          )
        await delay(Math.min(interval, 2_000))
      }
    })()
    this.healthy.set(name, check)
    return check
  }

  private async probe(plan: ProcessPlan, timeoutMs: number): Promise<{ ok: boolean; output: string }> {
    const child = spawn(plan.argv[0]!, plan.argv.slice(1), {
      cwd: plan.cwd,
      env: plan.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    this.probes.add(child)
    let output = ''
    child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2_000)))
    child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2_000)))
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs)
    const [code] = (await Promise.race([
      once(child, 'exit'),
      once(child, 'error').then(([e]) => [`spawn error: ${(e as Error).message}`]),
    ])) as [number | string | null]
    clearTimeout(timer)
    this.probes.delete(child)
    return {
      ok: code === 0,
      output: `${typeof code === 'string' ? code : `exit ${code}`}: ${output.trim().slice(-500)}`,
    }
  }

  /**
   * `docker compose stop`: SIGTERM to the service's main process (a container's
   * PID 1), SIGKILL to the whole group after stop_grace_period (default 10 s).
   */
  async stop(
    name: string,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean; ms: number }> {
    const p = this.processes.get(name)
    if (!p) throw new Error(`${name} was never started`)
    p.stopping = true
    const started = Date.now()
    if (p.child.exitCode !== null || p.child.signalCode !== null)
      return { ...(await p.exited), killed: false, ms: 0 }
    p.child.kill('SIGTERM')
    const grace = durationMs(this.compose.services[name]!.stop_grace_period, 10_000)
    let killed = false
    const timer = setTimeout(() => {
      killed = true
      killGroup(p.child, 'SIGKILL')
    }, grace)
    const result = await p.exited
    clearTimeout(timer)
    return { ...result, killed, ms: Date.now() - started }
  }

  /**
   * `docker compose down`: every running service stopped after the ones that
   * depend on it, independent ones at the same time.
   */
  async down(): Promise<Map<string, Awaited<ReturnType<ComposeRun['stop']>>>> {
    const results = new Map<string, Awaited<ReturnType<ComposeRun['stop']>>>()
    const stopped = new Map<string, Promise<void>>()
    const names = [...this.processes.keys()]
    const stopOne = (name: string): Promise<void> => {
      const known = stopped.get(name)
      if (known) return known
      const dependents = names.filter((n) =>
        dependsOn(this.compose.services[n]!).some((d) => d.service === name),
      )
      const done = Promise.all(dependents.map(stopOne)).then(async () => {
        results.set(name, await this.stop(name))
      })
      stopped.set(name, done)
      return done
    }
    await Promise.all(names.map(stopOne))
    return results
  }

  /** Every process group this run started, SIGKILLed; for afterAll, also after a failure. */
  async killAll(): Promise<void> {
    for (const p of this.processes.values()) {
      p.stopping = true
      killGroup(p.child, 'SIGKILL')
    }
    for (const child of this.probes) killGroup(child, 'SIGKILL')
    await Promise.all([...this.processes.values()].map((p) => p.exited))
  }

  /** The tail of every service's log, for a failure's diagnosis. */
  diagnosis(lines = 30): string {
    const parts = [...this.processes.values()].map(
      (p) => `----- ${p.name} (${p.logFile}) -----\n${tail(p.logFile, lines)}`,
    )
    for (const [name, output] of this.lastProbeOutput)
      parts.push(`----- ${name}: last failed healthcheck -----\n${output}`)
    return parts.join('\n')
  }
}

/** The whole process group of a child spawned detached (its pid is the group id); gone groups are fine. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // ESRCH: the group has exited already
  }
}
