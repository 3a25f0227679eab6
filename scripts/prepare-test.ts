/**
 * `pretest`: makes `npm test` self-sufficient on a fresh machine.
 *
 * 1. The local Kafka/registry runtime (Maven fetch, cached in .cache/) unless the
 *    suite will use an external stack or Docker (KAFKA_STACK, KAFKA_BROKERS +
 *    SCHEMA_REGISTRY_URL; see test/setup/global-setup.ts).
 * 2. Chromium for the browser test (`$CHROMIUM_PATH`, else /usr/bin/chromium);
 *    installed with apt-get when missing and running as root.
 * 3. Prometheus and promtool (Debian's `prometheus` package) for test/ops: rule unit
 *    tests and the real-Prometheus dashboard check ($PROMETHEUS_PATH, $PROMTOOL_PATH
 *    override the /usr/bin paths); installed with apt-get when missing, like Chromium.
 * 4. PostgreSQL server binaries (initdb, pg_ctl) for the PostgreSQL consumer test
 *    (`$PG_BIN`, else the newest /usr/lib/postgresql/<version>/bin); Debian's
 *    `postgresql` package installed with apt-get when missing and running as root.
 *    The test starts its own server from them; it never uses a system one.
 * 5. podman, runc, debootstrap and catatonit (Debian's packages) for the image test in test/deploy,
 *    installed with apt-get when missing and running as root, plus the containers.conf
 *    drop-in podman needs on these machines (scripts/image/podman.ts). Without root or
 *    apt this only says so: that test then reports itself as not run, with the reason.
 *    Also podman-compose 1.3.0 (Debian's package, scripts/image/podman-compose.ts) for the
 *    compose test there.
 * 6. iptables (Debian's package) for the network partition test in test/faults: the fault
 *    suite runs each Kafka node and service in its own network namespace and cuts links
 *    with iptables rules there (tools/faults/src/network/). Installed with apt-get when
 *    missing and running as root; without root this only says so (namespaces need root
 *    too, and the test then fails naming what is missing).
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fetchRuntime, isRuntimeCached, LocalStackError } from '@tep/local-stack'
import { ensurePodmanCompose } from './image/podman-compose.ts'
import { ensurePodman, isExecutable, PodmanError, podmanUnavailableReason } from './image/podman.ts'

const say = (line: string) => process.stdout.write(`[prepare-test] ${line}\n`)

function fail(message: string): never {
  process.stderr.write(`[prepare-test] error: ${message}\n`)
  process.exit(1)
}

async function prepareKafkaRuntime(): Promise<void> {
  const forced = process.env.KAFKA_STACK?.trim()
  const external = Boolean(process.env.KAFKA_BROKERS?.trim() && process.env.SCHEMA_REGISTRY_URL?.trim())
  if (forced === 'external' || forced === 'docker' || (!forced && external)) {
    say(
      `Kafka runtime: not needed (${forced ? `KAFKA_STACK=${forced}` : 'KAFKA_BROKERS and SCHEMA_REGISTRY_URL set'})`,
    )
    return
  }
  if (isRuntimeCached()) {
    say('Kafka runtime: Kafka and Apicurio already in .cache/')
    return
  }
  say('Kafka runtime: fetching Kafka and Apicurio from Maven Central (first run only)')
  try {
    await fetchRuntime({ log: (line) => say(`  ${line}`) })
  } catch (err) {
    // Without KAFKA_STACK the suite may still run on Docker, which needs no Maven;
    // the global setup then fails with a precise message if it needs the runtime after all.
    if (!forced && err instanceof LocalStackError) {
      say(`warning: ${err.message}`)
      say('continuing: the tests can still use Docker; without it they will stop with this same problem')
      return
    }
    fail(err instanceof Error ? err.message : String(err))
  }
}

function run(cmd: string, args: string[]): void {
  say(`$ ${cmd} ${args.join(' ')}`)
  const result = spawnSync(cmd, args, {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  if (result.error) fail(`${cmd} could not run: ${result.error.message}`)
  if (result.status !== 0) fail(`${cmd} ${args.join(' ')} exited with ${result.status}`)
}

let aptUpdated = false

/**
 * Installs Debian `packages` with apt-get (running as root), `apt-get update` once
 * per pretest however many are missing. Where that cannot be done (not root, no
 * apt-get), fails saying what needs them and how else to provide them, or with
 * `optional` says so and returns false (the test that needs them then says why it
 * cannot run).
 */
function aptInstall(what: string, packages: string[], o: { neededBy: string; otherwise?: string; flags?: string[]; optional?: boolean }): boolean {
  const root = process.getuid?.() === 0
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0
  const command = `apt-get install -y ${[...(o.flags ?? []), ...packages].join(' ')}`
  if (!root || !hasApt) {
    const why = `${what} is not installed and ${root ? 'there is no apt-get' : 'this is not root'}; ${o.neededBy}`
    if (o.optional) {
      say(`${why} (${command})`)
      return false
    }
    fail(`${why}. ${hasApt ? `Install it with: sudo ${command}` : 'Install it with your package manager'}${o.otherwise ? `, or ${o.otherwise}` : ''}.`)
  }
  say(`${what}: not found; installing Debian's ${packages.join(', ')} with apt-get (running as root)`)
  if (!aptUpdated) run('apt-get', ['update'])
  aptUpdated = true
  run('apt-get', ['install', '-y', ...(o.flags ?? []), ...packages])
  return true
}

function prepareChromium(): void {
  const chromium = process.env.CHROMIUM_PATH?.trim() || '/usr/bin/chromium'
  if (isExecutable(chromium)) {
    say(`Chromium: ${chromium}`)
    return
  }
  if (process.env.CHROMIUM_PATH?.trim()) {
    fail(`CHROMIUM_PATH is set to ${chromium}, which is not an executable file`)
  }
  aptInstall(`Chromium (${chromium})`, ['chromium'], { neededBy: 'the browser test needs it', otherwise: 'set CHROMIUM_PATH to a Chromium/Chrome binary' })
  if (!isExecutable(chromium)) fail(`apt-get installed chromium, but ${chromium} is still missing`)
  say(`Chromium: ${chromium}`)
}

function preparePrometheus(): void {
  const binaries = [process.env.PROMETHEUS_PATH?.trim() || '/usr/bin/prometheus', process.env.PROMTOOL_PATH?.trim() || '/usr/bin/promtool']
  if (binaries.every(isExecutable)) {
    say(`Prometheus: ${binaries.join(', ')}`)
    return
  }
  if (process.env.PROMETHEUS_PATH?.trim() || process.env.PROMTOOL_PATH?.trim()) {
    fail(`PROMETHEUS_PATH/PROMTOOL_PATH name ${binaries.filter((b) => !isExecutable(b)).join(', ')}, which is not an executable file`)
  }
  // Without recommends: no node exporter or other daemons, just prometheus and promtool.
  aptInstall('Prometheus (prometheus, promtool)', ['prometheus'], { neededBy: 'the operations tests (test/ops) need them', otherwise: 'set PROMETHEUS_PATH and PROMTOOL_PATH', flags: ['--no-install-recommends'] })
  const missing = binaries.filter((b) => !isExecutable(b))
  if (missing.length > 0) fail(`apt-get installed prometheus, but ${missing.join(', ')} is still missing`)
  say(`Prometheus: ${binaries.join(', ')}`)
}

function postgresBinDir(): string | undefined {
  const given = process.env.PG_BIN?.trim()
  if (given) return given
  let versions: string[]
  try {
    versions = readdirSync('/usr/lib/postgresql').filter((v) => /^[0-9]+$/.test(v))
  } catch {
    return undefined
  }
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0]
  return newest === undefined ? undefined : `/usr/lib/postgresql/${newest}/bin`
}

function preparePostgres(): void {
  const found = (): string | undefined => {
    const dir = postgresBinDir()
    return dir !== undefined && isExecutable(`${dir}/initdb`) && isExecutable(`${dir}/pg_ctl`) ? dir : undefined
  }
  const dir = found()
  if (dir !== undefined) {
    say(`PostgreSQL server: ${dir}`)
    return
  }
  if (process.env.PG_BIN?.trim()) fail(`PG_BIN is set to ${process.env.PG_BIN}, which has no initdb and pg_ctl`)
  aptInstall('the PostgreSQL server (initdb, pg_ctl)', ['postgresql'], { neededBy: 'the PostgreSQL consumer test needs it', otherwise: 'set PG_BIN to the directory holding initdb and pg_ctl' })
  const installed = found()
  if (installed === undefined) fail('apt-get installed postgresql, but initdb/pg_ctl are still missing under /usr/lib/postgresql')
  say(`PostgreSQL server: ${installed}`)
}

async function preparePodman(): Promise<void> {
  const unavailable = podmanUnavailableReason()
  if (unavailable !== undefined) {
    // Not fatal, unlike the tools above: the image test is the only user, and it skips
    // with this same reason where podman cannot run.
    say(`podman: not prepared (${unavailable}); the image and compose tests in test/deploy will not run`)
    return
  }
  try {
    // Installs what is missing (apt-get, as for Prometheus) and writes the containers.conf drop-in.
    ensurePodman((line) => say(line))
    // podman-compose for the compose test (scripts/image/podman-compose.ts says which and why).
    await ensurePodmanCompose((line) => say(line))
  } catch (err) {
    fail(err instanceof PodmanError ? err.message : String(err))
  }
}

function prepareIptables(): void {
  if (spawnSync('iptables', ['--version'], { stdio: 'ignore' }).status === 0) {
    say('iptables: installed')
    return
  }
  if (!aptInstall('iptables', ['iptables'], { neededBy: 'the network partition test in test/faults needs root and iptables', flags: ['--no-install-recommends'], optional: true })) return
  if (spawnSync('iptables', ['--version'], { stdio: 'ignore' }).status !== 0) fail('apt-get installed iptables, but iptables still does not run')
  say('iptables: installed')
}

await prepareKafkaRuntime()
prepareChromium()
preparePrometheus()
preparePostgres()
await preparePodman()
prepareIptables()
