/**
 * The entrypoint of docker-compose.yml's own services:
 *
 *   node scripts/compose/after-stack-ready.ts --wait-for=<url>,<url>... -- <script> [args...]
 *
 * waits until the broker (KAFKA_BROKERS) and every --wait-for URL (the registry and
 * the simulators) answer, creates the pipeline's topics (idempotent, as npm start
 * does; several services doing it at once is fine), then runs <script> in this
 * same process (it stays PID 1 and gets the container's signals).
 *
 * Why not depends_on `service_healthy` (or a one-shot `topics` service and
 * `service_completed_successfully`): podman-compose cannot honour the first on
 * podman 4.3 (it waits forever), and podman 4.3 refuses to start a container that
 * requires an exited one sharing a network namespace. `service_started`, which every
 * engine honours, plus this wait give the same order everywhere (docs/DECISIONS.md,
 * "Compose run by podman-compose"). --timeout (seconds, default 300) turns a stack
 * that never comes up into exit 1 naming what did not answer.
 */
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { createKafka, ensureTopics, TOPIC_CATALOG } from '@tep/kafka'

const say = (line: string) => process.stdout.write(`[after-stack-ready] ${line}\n`)
const { values, positionals } = parseArgs({
  options: { 'wait-for': { type: 'string', default: '' }, timeout: { type: 'string', default: '300' } },
  allowPositionals: true,
})
const [script, ...scriptArgs] = positionals
const timeoutS = Number(values.timeout)
if (script === undefined || !Number.isFinite(timeoutS) || timeoutS <= 0) {
  say(
    'usage: node scripts/compose/after-stack-ready.ts [--wait-for=<url>,...] [--timeout=<seconds>] -- <script> [args...]',
  )
  process.exit(2)
}
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092')
  .split(',')
  .map((b) => b.trim())
  .filter(Boolean)
const urls = values['wait-for']
  .split(',')
  .map((u) => u.trim())
  .filter(Boolean)
const deadline = Date.now() + timeoutS * 1000
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Retries `attempt` once a second until it resolves true, or exits 1 at the deadline with its last error. */
async function until(what: string, attempt: () => Promise<boolean>): Promise<void> {
  let last = 'no answer yet'
  for (;;) {
    try {
      if (await attempt()) return
    } catch (err) {
      last = err instanceof Error ? err.message : String(err)
    }
    if (Date.now() > deadline) {
      say(`${what}: not ready after ${timeoutS} s (${last}); exiting`)
      process.exit(1)
    }
    await pause(1_000)
  }
}

const started = Date.now()
await Promise.all([
  // Creating the topics is the broker's readiness check: it needs a controller and the metadata.
  until(`broker ${brokers.join(',')}`, async () => {
    const report = await Promise.race([
      ensureTopics(createKafka({ brokers, clientId: 'tep-after-stack-ready' }), TOPIC_CATALOG, {
        replicationFactor: 1,
      }),
      pause(15_000).then(() => {
        throw new Error('no answer within 15 s')
      }),
    ])
    return report !== undefined
  }),
  ...urls.map((url) => until(url, async () => (await fetch(url, { signal: AbortSignal.timeout(5_000) })).ok)),
])
say(
  `broker, topics and ${urls.length} URLs ready after ${((Date.now() - started) / 1000).toFixed(1)} s; running ${script}`,
)
const main = path.resolve(script)
process.argv = [process.argv[0]!, main, ...scriptArgs]
await import(pathToFileURL(main).href)
