/**
 * The images docker-compose.yml runs besides the project's own: the broker
 * (deploy/kafka/Dockerfile) and the registry (deploy/registry/Dockerfile), built
 * from the Kafka jars and the Apicurio application the local stack fetches from
 * Maven Central into .cache/ (@tep/local-stack's fetchRuntime), on Java 25.
 *
 * Their FROM, `eclipse-temurin:25-jdk`, cannot be pulled on our machines either,
 * so it is made here under that name, as scripts/image/podman.ts makes the node
 * base image: the Debian bookworm minbase image plus the host's Temurin 25 JDK
 * (the one the local stack runs Apicurio on) at the official image's place,
 * /opt/java/openjdk. A same-named image this code did not make (no `tep.base`
 * label: e.g. the real one) is used as it is.
 */
import { spawnSync } from 'node:child_process'
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fetchRuntime } from '@tep/local-stack'
import { CACHE_DIR, DEBIAN_IMAGE, imageExists, podman, PodmanError, repoRoot, type Log } from './podman.ts'

const KAFKA_DOCKERFILE = path.join(repoRoot, 'deploy/kafka/Dockerfile')
/** The FROM of deploy/kafka/Dockerfile and deploy/registry/Dockerfile. */
export const JAVA_BASE_IMAGE = /^FROM\s+(\S+)/m.exec(readFileSync(KAFKA_DOCKERFILE, 'utf8'))?.[1] ?? ''
const JAVA_MAJOR = Number(/:(\d+)-/.exec(JAVA_BASE_IMAGE)?.[1])

function javaMajor(javaHome: string): number | undefined {
  const out = spawnSync(path.join(javaHome, 'bin', 'java'), ['-version'], { encoding: 'utf8' })
  const m = /version "(\d+)/.exec(`${out.stderr}${out.stdout}`)
  return m ? Number(m[1]) : undefined
}

/** The host's JDK of JAVA_BASE_IMAGE's major version: $IMAGE_JAVA_HOME, $JAVA_HOME, then /usr/lib/jvm/*. */
export function hostJdk(): string {
  const candidates = [process.env.IMAGE_JAVA_HOME?.trim(), process.env.JAVA_HOME?.trim()]
    .filter((d): d is string => Boolean(d))
    .concat(
      existsSync('/usr/lib/jvm') ? readdirSync('/usr/lib/jvm').map((d) => path.join('/usr/lib/jvm', d)) : [],
    )
  const found = candidates.find((d) => existsSync(path.join(d, 'bin', 'java')) && javaMajor(d) === JAVA_MAJOR)
  if (found === undefined)
    throw new PodmanError(
      `${JAVA_BASE_IMAGE} is made from a host JDK ${JAVA_MAJOR} (IMAGE_JAVA_HOME, JAVA_HOME or /usr/lib/jvm/*), and none was found among ${candidates.join(', ') || 'nothing'}`,
    )
  return realpathSync(found)
}

/** JAVA_BASE_IMAGE, made locally (see the header); kept while its JDK is the same (label `tep.base`). */
export async function ensureJavaBaseImage(log: Log): Promise<void> {
  const jdk = hostJdk()
  const release = readFileSync(path.join(jdk, 'release'), 'utf8')
  const version = /JAVA_RUNTIME_VERSION="([^"]+)"/.exec(release)?.[1] ?? `java-${JAVA_MAJOR}`
  const identity = `debian-bookworm-minbase jdk-${version}`
  if (await imageExists(JAVA_BASE_IMAGE)) {
    const label = (
      await podman(['image', 'inspect', '--format', '{{index .Labels "tep.base"}}', JAVA_BASE_IMAGE])
    ).trim()
    if (label === identity || label === '') {
      log(`java base image: ${JAVA_BASE_IMAGE} (${label || 'not made here, used as it is'})`)
      return
    }
  }
  if (!(await imageExists(DEBIAN_IMAGE))) {
    const tarball = path.join(CACHE_DIR, 'debian-bookworm-minbase.tar')
    if (!existsSync(tarball))
      throw new PodmanError(
        `${DEBIAN_IMAGE} and ${tarball} are missing: run node scripts/image.ts --base-only first`,
      )
    await podman(['import', tarball, DEBIAN_IMAGE], { log })
  }
  // The JDK folder is the build context, the Containerfile beside it: nothing is copied twice.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tep-java-base-'))
  try {
    const containerfile = path.join(dir, 'Containerfile')
    writeFileSync(
      containerfile,
      `FROM ${DEBIAN_IMAGE}
COPY . /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN java -version
LABEL tep.base="${identity}"
`,
    )
    log(`java base image: ${JAVA_BASE_IMAGE} = ${DEBIAN_IMAGE} + ${jdk} (${version})`)
    await podman(['build', '--pull=never', '-f', containerfile, '-t', JAVA_BASE_IMAGE, jdk], { log })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The build contexts docker-compose.yml names for the broker and registry: .cache/, filled by fetchRuntime. */
export async function ensureStackBuildContexts(log: Log): Promise<{ kafka: string; apicurio: string }> {
  const { paths } = await fetchRuntime({ log })
  return { kafka: paths.kafkaDir, apicurio: paths.apicurioDir }
}
