/**
 * podman-compose for running docker-compose.yml with podman (test/deploy's compose
 * test, deploy/README.md "Compose with podman-compose").
 *
 * Which podman-compose: Debian 12's own (1.0.3) cannot run the file: it passes
 * `network_mode: service:netns` to podman as it is (podman refuses it) and adds the
 * project network to the same container besides (podman refuses host, container:
 * and service: modes next to another network). bookworm-backports' 1.0.6 maps
 * service: to container:, but its `down` leaves the project network behind, it
 * ignores `profiles` and every depends_on condition. Debian 13's 1.3.0 does all of
 * that: service:, profiles, `down` removing the project's networks, and in attached
 * `up` the service_started and service_completed_successfully conditions
 * (service_healthy waits on `podman wait --condition=healthy`, which podman 4.3
 * does not know: see docker-compose.yml for why the file needs no such condition).
 * It is one architecture-independent Python file whose dependencies (python3,
 * python3-yaml, python3-dotenv) bookworm has, so it is installed here from
 * Debian's archive with apt itself: apt-get downloads the package with a private
 * sources list naming trixie (the machine's own sources stay untouched; the lists
 * are verified against Debian's archive keys as any apt download), keeps it in
 * .cache/podman/, and `apt-get install ./<package>.deb` installs it with its
 * dependencies from bookworm.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import {
  CACHE_DIR,
  ensurePodman,
  PodmanError,
  podmanUnavailableReason,
  RUNTIME,
  run,
  type Log,
} from './podman.ts'

/** The Debian package installed (version as Debian names it) and the suite it comes from. */
export const PODMAN_COMPOSE = { version: '1.3.0', debianVersion: '1.3.0-1', suite: 'trixie' } as const
export const PODMAN_COMPOSE_BINARY = '/usr/bin/podman-compose'
const DEBIAN_MIRROR = process.env.DEBIAN_MIRROR?.trim() || 'http://deb.debian.org/debian'
const APT_DIR = path.join(CACHE_DIR, `apt-${PODMAN_COMPOSE.suite}`)
const DEB_FILE = path.join(CACHE_DIR, `podman-compose_${PODMAN_COMPOSE.debianVersion}_all.deb`)

/** Global podman-compose options: podman with the project's runtime (scripts/image/podman.ts). */
export const PODMAN_COMPOSE_GLOBAL_ARGS = [`--podman-args=--runtime=${RUNTIME}`] as const

/** The installed podman-compose's version, or undefined when there is none. */
export function installedPodmanComposeVersion(): string | undefined {
  if (!existsSync(PODMAN_COMPOSE_BINARY)) return undefined
  const out = spawnSync(PODMAN_COMPOSE_BINARY, ['--version'], { encoding: 'utf8' })
  // 1.3.0 prints "podman-compose version 1.3.0"; 1.0.x "podman-compose version: 1.0.x".
  return /podman-compose version:?\s+(\d+\.\d+\.\d+)/.exec(`${out.stdout}${out.stderr}`)?.[1]
}

const atLeast = (version: string, wanted: string) => {
  const [a, b] = [version, wanted].map((v) => v.split('.').map(Number))
  for (let i = 0; i < 3; i++) if ((a![i] ?? 0) !== (b![i] ?? 0)) return (a![i] ?? 0) > (b![i] ?? 0)
  return true
}

/** Why podman-compose cannot be used here, or undefined when it can (installed, or installable). */
export function podmanComposeUnavailableReason(): string | undefined {
  return podmanUnavailableReason()
}

/** podman (scripts/image/podman.ts) and podman-compose >= 1.3.0, installed with apt-get when missing. */
export async function ensurePodmanCompose(log: Log): Promise<void> {
  ensurePodman(log)
  const installed = installedPodmanComposeVersion()
  if (installed !== undefined && atLeast(installed, PODMAN_COMPOSE.version)) {
    log(`podman-compose: ${installed}`)
    return
  }
  log(
    `podman-compose: ${installed === undefined ? 'missing' : `${installed} is too old (see scripts/image/podman-compose.ts)`}; installing Debian ${PODMAN_COMPOSE.suite}'s ${PODMAN_COMPOSE.debianVersion}`,
  )
  if (!existsSync(DEB_FILE)) {
    const lists = path.join(APT_DIR, 'lists')
    const cache = path.join(APT_DIR, 'cache')
    mkdirSync(path.join(lists, 'partial'), { recursive: true })
    mkdirSync(path.join(cache, 'archives', 'partial'), { recursive: true })
    const sources = path.join(APT_DIR, 'sources.list')
    writeFileSync(sources, `deb ${DEBIAN_MIRROR} ${PODMAN_COMPOSE.suite} main\n`)
    // A private apt configuration: only this sources list, lists and cache under APT_DIR.
    const apt = [
      '-o',
      `Dir::Etc::SourceList=${sources}`,
      '-o',
      'Dir::Etc::SourceParts=/nonexistent',
      '-o',
      `Dir::State::Lists=${lists}`,
      '-o',
      `Dir::Cache=${cache}`,
      '-o',
      'APT::Sandbox::User=root',
    ]
    await run('apt-get', [...apt, 'update'], { log })
    await run('apt-get', [...apt, 'download', `podman-compose=${PODMAN_COMPOSE.debianVersion}`], {
      log,
      cwd: CACHE_DIR,
    })
    if (!existsSync(DEB_FILE))
      throw new PodmanError(
        `apt-get download podman-compose=${PODMAN_COMPOSE.debianVersion} left no ${DEB_FILE}`,
      )
  }
  // Its dependencies (python3, python3-yaml, python3-dotenv) come from the machine's own sources.
  await run('apt-get', ['install', '-y', '--no-install-recommends', DEB_FILE], { log })
  const now = installedPodmanComposeVersion()
  if (now === undefined || !atLeast(now, PODMAN_COMPOSE.version))
    throw new PodmanError(
      `apt-get installed ${DEB_FILE}, but ${PODMAN_COMPOSE_BINARY} reports ${now ?? 'nothing'}`,
    )
  log(`podman-compose: ${now}`)
}

/** `podman-compose <args>` with the project's podman runtime, in the repository root. */
export function podmanCompose(
  args: readonly string[],
  options: { log?: Log; cwd?: string } = {},
): Promise<string> {
  return run(PODMAN_COMPOSE_BINARY, [...PODMAN_COMPOSE_GLOBAL_ARGS, ...args], options)
}
