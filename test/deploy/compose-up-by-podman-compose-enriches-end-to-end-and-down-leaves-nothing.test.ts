/**
 * docker-compose.yml run by a compose engine: podman-compose (Debian's 1.3.0,
 * scripts/image/podman-compose.ts) on the images the project builds (the demo
 * image by scripts/image/podman.ts, the broker and registry from deploy/kafka and
 * deploy/registry), under a project name of its own and with every published port
 * moved to a free one (the TEP_*_PORT variables of the file), so the suite's shared
 * stack on 9092/8081 is never in the way:
 *
 *   - `podman-compose up` (attached: the mode in which it honours depends_on)
 *     starts every default service, each after the ones it depends on, and each
 *     service's healthcheck, run by podman as the file writes it, passes;
 *   - raw events produced to the published broker come out enriched with the
 *     outcome the enrichment simulator promises;
 *   - a bank consent granted through bank-sync's published consent gateway brings
 *     that account's transactions, enriched, to the enriched topic;
 *   - `podman-compose down -v` leaves no container, network, pod or volume of the
 *     project behind.
 *
 * Runs where podman can (root, or apt-get to install it); elsewhere it says why not.
 * afterAll removes whatever carries the project's label, also after a failure.
 */
import {
  AvroSerde,
  TOPICS,
  TopicReader,
  createKafka,
  createRecordProducer,
  createSchemaRegistry,
} from '@tep/kafka'
import { generateRawEvents } from '@tep/sample-traffic'
import type { EnrichedTransaction } from '@tep/schemas'
import { SimDataset } from '@tep/sim-data'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensurePodmanCompose, podmanComposeUnavailableReason } from '../../scripts/image/podman-compose.ts'
import { podman, prepareAndBuild } from '../../scripts/image/podman.ts'
import { ensureJavaBaseImage, ensureStackBuildContexts } from '../../scripts/image/stack-images.ts'
import { uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import { grantConsentThroughGateway, matchedBankTransactionsOf } from './consent-through-gateway.ts'
import { followEnriched } from './enriched-follower.ts'
import {
  ComposeProject,
  PROJECT_PREFIX,
  buildStackImages,
  demoImageOf,
  freeRange,
  readComposeFile,
} from './podman-compose-project.ts'

const log = (line: string) => process.stderr.write(`[compose-test] ${line}\n`)
const unavailable = podmanComposeUnavailableReason()
if (unavailable !== undefined) log(`not run: podman-compose cannot be used here: ${unavailable}`)

const { services } = readComposeFile()
/** What a plain `up` starts: every service outside a profile. */
const DEFAULT_SERVICES = Object.keys(services).filter((n) => services[n]!.profiles === undefined)
const METRICS = {
  'transaction-ingest': 0,
  refresher: 1,
  'invalidation-poller': 2,
  'bank-sync': 3,
  'pipeline-exporter': 4,
}

describe('docker-compose.yml run by podman-compose', () => {
  const project = new ComposeProject(`${PROJECT_PREFIX}${process.pid}-${Date.now().toString(36)}`, {})
  const url = { kafka: '', registry: '', bank: '', gateway: '', metrics: 0 }
  const enriched = new Map<string, EnrichedTransaction>()
  let enrichedReader: TopicReader | undefined
  let kafka: ReturnType<typeof createKafka> | undefined
  let downDone = false

  beforeAll(async () => {
    if (unavailable !== undefined) return
    const timings: string[] = []
    const timed = async <T>(what: string, step: () => Promise<T>): Promise<T> => {
      const started = Date.now()
      const result = await step()
      timings.push(`${what} ${((Date.now() - started) / 1000).toFixed(1)} s`)
      return result
    }
    await timed('podman-compose', () => ensurePodmanCompose(log))
    const built = await timed('demo image', () => prepareAndBuild(['demo'], log))
    // The tag compose runs is the one just built (tags are machine-wide; a concurrent build may move it).
    expect(demoImageOf(services)).toBe(built.demo!.tag)
    await timed('broker and registry images', async () => {
      await ensureStackBuildContexts(log)
      await ensureJavaBaseImage(log)
      await buildStackImages(services, log)
    })
    await ComposeProject.removeLeftovers(log)

    const taken = new Set<number>()
    const port = async () => freeRange(1, taken)
    const ports = {
      TEP_KAFKA_PORT: await port(),
      TEP_REGISTRY_PORT: await port(),
      TEP_ENRICHMENT_SIM_PORT: await port(),
      TEP_BANK_SIM_PORT: await port(),
      TEP_CONSENT_GATEWAY_PORT: await port(),
      TEP_PROMETHEUS_PORT: await port(),
      TEP_GRAFANA_PORT: await port(),
    }
    url.metrics = await freeRange(5, taken)
    Object.assign(project.env, Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])), {
      TEP_METRICS_PORTS: `${url.metrics}-${url.metrics + 4}`,
    })
    url.kafka = `127.0.0.1:${ports.TEP_KAFKA_PORT}`
    url.registry = `http://127.0.0.1:${ports.TEP_REGISTRY_PORT}/apis/ccompat/v7`
    url.bank = `http://127.0.0.1:${ports.TEP_BANK_SIM_PORT}`
    url.gateway = `http://127.0.0.1:${ports.TEP_CONSENT_GATEWAY_PORT}`

    project.startUp(DEFAULT_SERVICES, log)
    await timed('up until every /readyz answers', async () => {
      const ended = project.upEnded()!.then((code) => {
        throw new Error(
          `podman-compose up ended (${code}) before the services were ready:\n${project.tail()}`,
        )
      })
      const ready = Promise.all(
        Object.entries(METRICS).map(([name, i]) =>
          waitFor(
            `${name}'s /readyz on its published port ${url.metrics + i}`,
            async () =>
              (
                await fetch(`http://127.0.0.1:${url.metrics + i}/readyz`, {
                  signal: AbortSignal.timeout(2_000),
                })
              ).ok,
            { timeoutMs: 420_000, intervalMs: 1_000 },
          ),
        ),
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\npodman-compose up:\n${project.tail()}`)
      })
      try {
        await Promise.race([ready, ended])
      } finally {
        ended.catch(() => {})
        ready.catch(() => {})
      }
    })
    log(timings.join(' · '))

    // Everything enriched from now on, decoded; the tests look for their own transaction ids.
    kafka = createKafka({ brokers: [url.kafka], clientId: uniqueName('compose-test'), logLevel: 'warn' })
    enrichedReader = await followEnriched(kafka, url.registry, enriched)
  }, 1_500_000)

  afterAll(async () => {
    await enrichedReader?.stop()
    if (unavailable !== undefined) return
    if (!downDone) {
      await project.down(log).catch((err: unknown) => log(`down after a failure: ${(err as Error).message}`))
      await project.removeByLabel()
    }
  }, 180_000)

  it.skipIf(unavailable !== undefined)(
    'starts each default service after the ones it depends on, and every healthcheck of the file passes',
    async () => {
      const startedAt = new Map<string, number>()
      for (const name of DEFAULT_SERVICES) {
        const at = (
          await podman(['inspect', '--format', '{{.State.StartedAt.UnixMilli}}', `${project.name}_${name}_1`])
        ).trim()
        startedAt.set(name, Number(at))
      }
      for (const name of DEFAULT_SERVICES)
        for (const dependency of Object.keys(services[name]!.depends_on ?? {}))
          expect(startedAt.get(name)!, `${name} started after ${dependency}`).toBeGreaterThanOrEqual(
            startedAt.get(dependency)!,
          )
      // podman runs no healthcheck by itself here (no systemd for its timers): `podman healthcheck run`
      // runs the file's command in the container now, and exits 0 only when it passed.
      const checked = DEFAULT_SERVICES.filter((n) => services[n]!.healthcheck !== undefined)
      expect(checked.length).toBeGreaterThan(5)
      for (const name of checked) {
        const status = await podman(['healthcheck', 'run', `${project.name}_${name}_1`]).then(
          () => 'healthy',
          (err: unknown) => (err as Error).message,
        )
        expect(status, name).toBe('healthy')
      }
    },
    120_000,
  )

  it.skipIf(unavailable !== undefined)(
    'enriches raw events produced to the published broker with the outcome the simulator promises',
    async () => {
      const runId = uniqueName('compose')
      // The dead-letter cases are covered elsewhere (test/ingest); here every event has an enriched outcome.
      const events = generateRawEvents(new SimDataset(), { count: 60, seed: 11, idPrefix: runId }).filter(
        (e) => e.expected !== 'DLQ',
      )
      expect([...new Set(events.map((e) => e.expected))].sort()).toEqual(['MATCHED', 'NOT_FOUND', 'REJECTED'])
      const rawCodec = new AvroSerde({ registry: createSchemaRegistry({ url: url.registry }) }).topic(
        TOPICS.transactionsRaw,
        'RawTransaction',
      )
      const producer = createRecordProducer(kafka!)
      try {
        await producer.send(
          TOPICS.transactionsRaw,
          await Promise.all(
            events.map(async (e) => ({ key: e.raw.transactionId, value: await rawCodec.encode(e.raw) })),
          ),
        )
      } finally {
        await producer.close()
      }
      await waitFor(
        `the ${events.length} enriched results of ${runId}`,
        () => events.every((e) => enriched.has(e.raw.transactionId)),
        { timeoutMs: 90_000 },
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\npodman-compose up:\n${project.tail()}`)
      })
      for (const e of events) {
        const result = enriched.get(e.raw.transactionId)!
        expect(result.status, e.raw.transactionId).toBe(e.expected)
        if (e.expected === 'MATCHED') expect(result.shopUid, e.raw.transactionId).toBe(e.expectedShopUid)
      }
    },
    150_000,
  )

  it.skipIf(unavailable !== undefined)(
    'enriches the transactions of a bank consent granted through the published consent gateway',
    async () => {
      const customerId = uniqueName('compose-customer')
      const { redirectUrl } = await grantConsentThroughGateway(url, customerId)
      // The redirect named the gateway's published port: the file keeps it the same inside and out.
      expect(new URL(redirectUrl).origin).toBe(url.gateway)
      const results = await matchedBankTransactionsOf(enriched, customerId, 120_000).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\npodman-compose up:\n${project.tail()}`)
      })
      expect(results.every((r) => r.raw.accountId !== null)).toBe(true)
    },
    180_000,
  )

  it.skipIf(unavailable !== undefined)(
    'leaves no container, network, pod or volume of the project after podman-compose down',
    async () => {
      await enrichedReader?.stop()
      enrichedReader = undefined
      const before = await project.remaining()
      expect(before.containers.length).toBe(DEFAULT_SERVICES.length)
      expect(before.networks.length).toBeGreaterThan(0)
      const mounted = await project.mountedVolumes()
      expect(mounted.length, 'the ingest-state volume at least').toBeGreaterThan(0)
      await project.down(log)
      downDone = true
      // The attached `up` ends once its containers are gone.
      const code = await Promise.race([
        project.upEnded()!,
        new Promise((resolve) => setTimeout(() => resolve('still running 60 s after down'), 60_000)),
      ])
      expect(code === 'still running 60 s after down', project.tail(20)).toBe(false)
      expect(await project.remaining()).toEqual({ containers: [], networks: [], pods: [], volumes: [] })
      // Anonymous volumes (an image's VOLUME) carry no project label: looked up by name.
      const still = (await podman(['volume', 'ls', '--format', '{{.Name}}']))
        .split('\n')
        .filter((v) => mounted.includes(v))
      expect(still).toEqual([])
    },
    180_000,
  )
})
