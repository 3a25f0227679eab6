/**
 * One podman-compose project of a test run: docker-compose.yml's images built as
 * the file names them, `podman-compose up` attached (the mode in which podman-compose
 * 1.3.0 honours depends_on conditions) as a child process, and `down`; every
 * container, network, pod and volume it made carries the project's label
 * (io.podman.compose.project), which is how leftovers are found.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { parse } from 'yaml'
import {
  PODMAN_COMPOSE_BINARY,
  PODMAN_COMPOSE_GLOBAL_ARGS,
  podmanCompose,
} from '../../scripts/image/podman-compose.ts'
import { imageTags, podman, repoRoot, type Log } from '../../scripts/image/podman.ts'

/** Every project this test starts is named so; a dead run's are removed by it. */
export const PROJECT_PREFIX = 'tep-compose-test-'
export const PROJECT_LABEL = 'io.podman.compose.project'

export interface ComposeService {
  image?: string
  build?: { context: string; dockerfile?: string; target?: string }
  depends_on?: Record<string, { condition: string }>
  healthcheck?: { test: string[] }
  profiles?: string[]
}

/** `${NAME:-default}` as compose interpolates it with NAME unset (what the file means by default). */
export function withDefaults(text: string): string {
  return text.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1')
}

export function readComposeFile(): { services: Record<string, ComposeService> } {
  return parse(withDefaults(readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8')), {
    merge: true,
  }) as {
    services: Record<string, ComposeService>
  }
}

/**
 * Builds what the file builds besides the project's own image (which
 * scripts/image/podman.ts builds, with the flags its npm ci needs): each other
 * `build` of the file, tagged with its `image`. Paths are resolved as Docker
 * Compose resolves them (lexically from the file's folder): podman-compose joins
 * context and dockerfile and lets the kernel resolve them, which under a
 * symlinked .cache/ (a git worktree sharing the downloads) leaves the checkout.
 */
export async function buildStackImages(
  services: Record<string, ComposeService>,
  log: Log,
): Promise<string[]> {
  const built: string[] = []
  for (const [name, s] of Object.entries(services)) {
    if (s.build === undefined || s.build.context === '.') continue
    if (s.image === undefined) throw new Error(`compose service ${name} builds without naming its image`)
    const context = path.resolve(repoRoot, s.build.context)
    const dockerfile = path.resolve(context, s.build.dockerfile ?? 'Dockerfile')
    await podman(['build', '--pull=never', '-f', dockerfile, '-t', s.image, context], { log })
    built.push(s.image)
  }
  return built
}

/** The compose file's own image is the one scripts/image/podman.ts tags (package.json's version). */
export function demoImageOf(services: Record<string, ComposeService>): string | undefined {
  return (
    Object.values(services).find((s) => s.build?.context === '.' && s.build.target === 'demo')?.image ??
    imageTags().demo
  )
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)))
  })
}

/** `count` consecutive free ports on 127.0.0.1 (the metrics range is published as one). */
export async function freeRange(count: number, taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000)
    const ports = Array.from({ length: count }, (_, i) => base + i)
    if (ports.some((p) => taken.has(p))) continue
    if ((await Promise.all(ports.map(isFree))).every(Boolean)) {
      for (const p of ports) taken.add(p)
      return base
    }
  }
  throw new Error(`no ${count} consecutive free ports on 127.0.0.1`)
}

export class ComposeProject {
  readonly name: string
  readonly env: Record<string, string>
  private up: ChildProcess | undefined
  private upExit: Promise<number | null> | undefined
  private output = ''

  constructor(name: string, env: Record<string, string>) {
    this.name = name
    this.env = env
  }

  /** Removes what projects of killed earlier runs left (their runner's pid is in the name and gone). */
  static async removeLeftovers(log: Log): Promise<void> {
    const lines = (await podman(['ps', '-a', '--format', `{{index .Labels "${PROJECT_LABEL}"}}`])).split('\n')
    const dead = new Set(
      lines
        .filter((p) => p.startsWith(PROJECT_PREFIX))
        .filter((p) => {
          const pid = Number(p.slice(PROJECT_PREFIX.length).split('-')[0])
          try {
            process.kill(pid, 0)
            return false
          } catch {
            return true
          }
        }),
    )
    for (const project of dead) {
      log(`removing leftovers of compose project ${project}`)
      await new ComposeProject(project, {}).removeByLabel()
    }
  }

  /** `podman-compose -p <name> up --no-build [services]`, attached, in the background. */
  startUp(services: readonly string[], log: Log): void {
    const args = [...PODMAN_COMPOSE_GLOBAL_ARGS, '-p', this.name, 'up', '--no-build', ...services]
    log(`$ ${PODMAN_COMPOSE_BINARY} ${args.join(' ')}`)
    const child = spawn(PODMAN_COMPOSE_BINARY, args, {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...this.env },
    })
    const keep = (d: Buffer) => {
      this.output += d.toString()
      if (this.output.length > 400_000) this.output = this.output.slice(-200_000)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    this.up = child
    this.upExit = new Promise((resolve) => child.once('close', (code) => resolve(code)))
  }

  /** The attached `up`'s output so far (the containers' logs, prefixed with their service), podman's systemd noise left out. */
  tail(lines = 80): string {
    return this.output
      .split('\n')
      .filter((l) => !l.includes('unable to get systemd connection'))
      .slice(-lines)
      .join('\n')
  }

  /** Resolves with `up`'s exit code once it has ended; undefined while it runs. */
  upEnded(): Promise<number | null> | undefined {
    return this.upExit
  }

  isUp(): boolean {
    return this.up !== undefined && this.up.exitCode === null && this.up.signalCode === null
  }

  async down(log: Log): Promise<string> {
    return podmanCompose(['-p', this.name, 'down', '-v'], { log })
  }

  /** Containers, networks, pods and volumes of this project still there, by kind. */
  async remaining(): Promise<Record<'containers' | 'networks' | 'pods' | 'volumes', string[]>> {
    const filter = ['--filter', `label=${PROJECT_LABEL}=${this.name}`]
    const list = async (args: string[]) => (await podman(args)).split('\n').filter(Boolean)
    const [containers, networks, pods, volumes] = await Promise.all([
      list(['ps', '-a', ...filter, '--format', '{{.Names}}']),
      list(['network', 'ls', ...filter, '--format', '{{.Name}}']),
      list(['pod', 'ps', ...filter, '--format', '{{.Name}}']),
      list(['volume', 'ls', ...filter, '--format', '{{.Name}}']),
    ])
    return { containers, networks, pods, volumes }
  }

  /** Every volume mounted into the project's containers, named or anonymous (those carry no project label). */
  async mountedVolumes(): Promise<string[]> {
    const containers = (await this.remaining()).containers
    if (containers.length === 0) return []
    const names = await podman(['inspect', '--format', '{{range .Mounts}}{{.Name}} {{end}}', ...containers])
    return [...new Set(names.split(/\s+/).filter(Boolean))].sort()
  }

  /** Last resort after a failure: removes whatever carries the project's label. */
  async removeByLabel(): Promise<void> {
    const left = await this.remaining()
    if (left.containers.length > 0) await podman(['rm', '-f', '-t', '5', ...left.containers]).catch(() => '')
    if (left.pods.length > 0) await podman(['pod', 'rm', '-f', ...left.pods]).catch(() => '')
    if (left.networks.length > 0) await podman(['network', 'rm', '-f', ...left.networks]).catch(() => '')
    if (left.volumes.length > 0) await podman(['volume', 'rm', '-f', ...left.volumes]).catch(() => '')
    this.up?.kill('SIGKILL')
  }
}
