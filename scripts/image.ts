/**
 * `node scripts/image.ts`: builds the project's container image with podman on a
 * machine without a Docker engine or a reachable container registry (see
 * scripts/image/podman.ts and deploy/README.md, "Build and run the image with podman").
 */
import { parseArgs } from 'node:util'
import { PodmanError, prepareAndBuild, type Target } from './image/podman.ts'

const HELP = `usage: node scripts/image.ts [--target production|demo]... [--base-only]

As root: installs podman, runc, debootstrap and catatonit with apt-get when missing, writes
the containers.conf drop-in podman needs here, makes the Dockerfile's base image
locally (Debian bookworm minbase + this checkout's Node 24 and npm; the Debian
root filesystem is cached in .cache/podman/), then builds the Dockerfile's
targets with podman: tep:<version> (production) and tep-demo:<version> (demo,
with the simulators). Default: both targets.

options:
  --target T    build only this target (repeatable)
  --base-only   stop after the base image
  -h, --help    this text`

const say = (line: string) => process.stderr.write(`[image] ${line}\n`)

const { values } = parseArgs({
  options: {
    help: { type: 'boolean', short: 'h' },
    target: { type: 'string', multiple: true },
    'base-only': { type: 'boolean' },
  },
})
if (values.help) {
  process.stdout.write(`${HELP}\n`)
  process.exit(0)
}
const targets = (values.target ?? ['production', 'demo']) as Target[]
for (const t of targets) {
  if (t !== 'production' && t !== 'demo') {
    say(`error: --target must be production or demo, got ${t}`)
    process.exit(2)
  }
}
try {
  const started = Date.now()
  const built = await prepareAndBuild(values['base-only'] ? [] : targets, say)
  const tags = Object.values(built).map((b) => b.tag)
  say(
    `done in ${((Date.now() - started) / 1000).toFixed(0)} s${tags.length > 0 ? `: ${tags.join(', ')}` : ''}`,
  )
} catch (err) {
  say(`error: ${err instanceof PodmanError ? err.message : String(err)}`)
  process.exit(1)
}
