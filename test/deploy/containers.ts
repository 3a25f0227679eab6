/**
 * Containers of one test run, started from the project's images with podman
 * (scripts/image/podman.ts) on the host network, so that they reach the test's
 * broker and registry (host processes) and each other on 127.0.0.1 (the simulators
 * speak plain HTTP, which the services accept from loopback hosts only).
 */
import { podman } from '../../scripts/image/podman.ts'
import { waitFor } from '../support/wait-for.ts'

/** Label of every container these tests start: leftovers of a killed run are removed by it. */
export const TEST_LABEL = 'tep.test=image-builds-and-enriches'

export interface ContainerSpec {
  name: string
  image: string
  /** The container command: node's arguments (the image's entrypoint is `node`). */
  args: string[]
  env: Record<string, string>
  /** Writable tmpfs mounts besides /tmp (the root filesystem is read-only, as in deploy/k8s). */
  tmpfs?: string[]
}

export class Containers {
  readonly started: string[] = []
  private readonly prefix: string

  constructor(prefix: string) {
    this.prefix = prefix
  }

  /** Removes containers a previous run left behind (runner killed before its afterAll). */
  async removeLeftovers(): Promise<void> {
    const ids = (await podman(['ps', '-a', '-q', '--filter', `label=${TEST_LABEL}`]))
      .split('\n')
      .filter(Boolean)
    if (ids.length > 0) await podman(['rm', '-f', '-t', '0', ...ids])
  }

  /**
   * `podman run -d` with the restrictions of deploy/k8s: read-only root filesystem
   * (podman adds a tmpfs /tmp), no capabilities, no privilege escalation, the image's
   * non-root user.
   */
  async start(spec: ContainerSpec): Promise<string> {
    const name = `${this.prefix}-${spec.name}`
    const env = Object.entries(spec.env).flatMap(([k, v]) => ['--env', `${k}=${v}`])
    const tmpfs = (spec.tmpfs ?? []).flatMap((t) => ['--tmpfs', t])
    await podman([
      'run',
      '-d',
      '--name',
      name,
      '--label',
      TEST_LABEL,
      '--network',
      'host',
      '--read-only',
      '--cap-drop',
      'all',
      '--security-opt',
      'no-new-privileges',
      ...tmpfs,
      ...env,
      spec.image,
      ...spec.args,
    ])
    this.started.push(name)
    return name
  }

  async logs(name: string, lines = 60): Promise<string> {
    return podman(['logs', '--tail', String(lines), name]).catch(
      (err: unknown) => `(no logs: ${(err as Error).message})`,
    )
  }

  /**
   * Resolves when `url` answers 2xx; rejects at once, with the container's log, if
   * the container exits first (`podman wait` returns when it stops). HTTP readiness
   * offers no event, hence the poll with a deadline.
   */
  async ready(name: string, url: string, timeoutMs = 90_000): Promise<void> {
    const controller = new AbortController()
    const exited = podman(['wait', name]).then(async (code) => {
      throw new Error(
        `container ${name} exited (${code.trim()}) before ${url} answered:\n${await this.logs(name)}`,
      )
    })
    const answered = waitFor(
      `${url} of container ${name}`,
      async () =>
        (await fetch(url, { signal: AbortSignal.any([controller.signal, AbortSignal.timeout(2_000)]) })).ok,
      { timeoutMs, intervalMs: 250 },
    ).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${name}'s log:\n${await this.logs(name)}`)
    })
    try {
      await Promise.race([answered, exited])
    } finally {
      controller.abort()
      // The race's loser must not turn into an unhandled rejection.
      exited.catch(() => {})
      answered.catch(() => {})
    }
  }

  /** Stops and removes every container started here (SIGTERM, then SIGKILL after 10 s). */
  async removeAll(): Promise<void> {
    if (this.started.length === 0) return
    await podman(['rm', '-f', '-t', '10', ...this.started])
    this.started.length = 0
  }
}
