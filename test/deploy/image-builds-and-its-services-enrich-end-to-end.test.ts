/**
 * The Dockerfile builds with podman (scripts/image/podman.ts: base image made
 * locally, both targets built), and the services run from the production image
 * and the simulators from the demo image, against the test's broker and registry
 * (host processes, --network host), enrich end to end:
 *   - raw card and transfer events produced here come out of transaction-ingest
 *     with the outcome the enrichment simulator promises for each;
 *   - a bank consent granted through bank-sync's consent gateway brings that
 *     account's transactions, enriched, to the enriched topic;
 *   - refresher and invalidation-poller start and report ready.
 * Runs where podman can (root, or apt-get to install it); elsewhere it says why not.
 */
import { AvroSerde, TOPIC_CATALOG, TOPICS, TopicReader, createSchemaRegistry, ensureTopics } from '@tep/kafka'
import { distinctPortPicker } from '@tep/local-stack'
import { REFRESHER_MALLOC_ENV } from '@tep/refresher'
import { generateRawEvents } from '@tep/sample-traffic'
import type { EnrichedTransaction } from '@tep/schemas'
import { SimDataset } from '@tep/sim-data'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { podman, podmanUnavailableReason, prepareAndBuild } from '../../scripts/image/podman.ts'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import { grantConsentThroughGateway, matchedBankTransactionsOf } from './consent-through-gateway.ts'
import { Containers } from './containers.ts'
import { followEnriched } from './enriched-follower.ts'

const log = (line: string) => process.stderr.write(`[image-test] ${line}\n`)
const unavailable = podmanUnavailableReason()
if (unavailable !== undefined) log(`not run: podman cannot be used here: ${unavailable}`)

// Shared by the simulators (which accept them) and the services (which use them), as in npm start.
const SIM_CREDENTIALS = {
  ENRICHMENT_CLIENT_ID: 'tep-demo-client',
  ENRICHMENT_CLIENT_SECRET: 'tep-demo-secret',
}

describe('the container image built with podman', () => {
  const kit = createKafkaTestKit()
  const containers = new Containers(`tep-image-test-${process.pid}`)
  const images = { production: '', demo: '' }
  const urls = { enrichment: '', bank: '', gateway: '' }
  const health: Record<string, string> = {}
  const enriched = new Map<string, EnrichedTransaction>()
  let enrichedReader: TopicReader | undefined

  beforeAll(async () => {
    if (unavailable !== undefined) return
    const timings: string[] = []
    const timed = async <T>(what: string, step: () => Promise<T>): Promise<T> => {
      const started = Date.now()
      const result = await step()
      timings.push(`${what} ${((Date.now() - started) / 1000).toFixed(1)} s`)
      return result
    }
    const built = await timed('build (podman, base image, both targets)', () =>
      prepareAndBuild(['production', 'demo'], log),
    )
    // By id: the tags are machine-wide, and another checkout may be building too.
    images.production = built.production!.id
    images.demo = built.demo!.id
    await containers.removeLeftovers()

    const brokers = inject('kafkaBrokers').join(',')
    const registryUrl = inject('registryUrl')
    await ensureTopics(kit.kafka, TOPIC_CATALOG)
    // Everything on the host network: ports picked here, never the same one twice.
    const freePort = distinctPortPicker()
    const [enrichmentPort, bankPort, gatewayPort] = [await freePort(), await freePort(), await freePort()]
    urls.enrichment = `http://127.0.0.1:${enrichmentPort}`
    urls.bank = `http://127.0.0.1:${bankPort}`
    urls.gateway = `http://127.0.0.1:${gatewayPort}`
    const bankRedirectUri = `${urls.gateway}/consents/callback`
    const pipelineEnv = { KAFKA_BROKERS: brokers, SCHEMA_REGISTRY_URL: registryUrl, LOG_LEVEL: 'warn' }
    const enrichmentEnv = { ...pipelineEnv, ...SIM_CREDENTIALS, ENRICHMENT_API_URL: urls.enrichment }

    await timed('simulators ready', async () => {
      // No --mutations: the simulator keeps the answers its samples promise.
      const enrichmentSim = await containers.start({
        name: 'enrichment-sim',
        image: images.demo,
        args: ['simulators/enrichment-sim/src/main.ts', '--port', String(enrichmentPort)],
        env: {
          LOG_LEVEL: 'warn',
          SIM_CLIENT_ID: SIM_CREDENTIALS.ENRICHMENT_CLIENT_ID,
          SIM_CLIENT_SECRET: SIM_CREDENTIALS.ENRICHMENT_CLIENT_SECRET,
        },
      })
      const bankSim = await containers.start({
        name: 'bank-sim',
        image: images.demo,
        args: ['simulators/bank-sim/src/main.ts', '--port', String(bankPort)],
        env: { LOG_LEVEL: 'warn', SIM_BANK_REDIRECT_URI: bankRedirectUri },
      })
      await Promise.all([
        containers.ready(enrichmentSim, `${urls.enrichment}/__admin/stats`),
        containers.ready(bankSim, `${urls.bank}/__admin/stats`),
      ])
    })

    await timed('services ready', async () => {
      const services = [
        // As deployed (compose, k8s): glibc's mmap threshold of services/refresher/src/runtime.ts.
        { name: 'refresher', env: { ...enrichmentEnv, ...REFRESHER_MALLOC_ENV } },
        { name: 'invalidation-poller', env: { ...enrichmentEnv, INVALIDATIONS_POLL_INTERVAL: '5s' } },
        // The table checkpoint directory, on a tmpfs the node user can write (podman 4.3's --tmpfs takes no uid=).
        {
          name: 'transaction-ingest',
          env: {
            ...enrichmentEnv,
            NODE_OPTIONS: '--max-semi-space-size=64',
            INGEST_STATE_DIR: '/var/lib/tep/ingest',
          },
          tmpfs: ['/var/lib/tep/ingest:rw,mode=1777'],
        },
        {
          name: 'bank-sync',
          // The explicit switch for bank-sync's public DEVELOPMENT keys against the loopback simulator (as npm start).
          env: {
            ...pipelineEnv,
            BANK_SYNC_DEVELOPMENT_KEYS: 'true',
            BANK_API_URL: urls.bank,
            BANK_REDIRECT_URI: bankRedirectUri,
            CONSENT_GATEWAY_PORT: String(gatewayPort),
            SYNC_INTERVAL: '30s',
            SYNC_JITTER: '5s',
            BANK_SYNC_INSTANCE_ID: uniqueName('image-bank-sync'),
          },
        },
      ]
      const ready: Array<Promise<void>> = []
      for (const service of services) {
        const port = await freePort()
        health[service.name] = `http://127.0.0.1:${port}`
        const name = await containers.start({
          name: service.name,
          image: images.production,
          args: [`services/${service.name}/src/main.ts`],
          env: { ...service.env, METRICS_PORT: String(port) },
          ...(service.tmpfs ? { tmpfs: service.tmpfs } : {}),
        })
        ready.push(containers.ready(name, `${health[service.name]}/readyz`, 150_000))
      }
      await Promise.all(ready)
    })
    log(timings.join(' · '))

    // Everything enriched from now on, decoded; the tests look for their own transaction ids.
    enrichedReader = await followEnriched(kit.kafka, registryUrl, enriched)
  }, 900_000)

  afterAll(async () => {
    await enrichedReader?.stop()
    await kit.disconnectAll()
    await containers.removeAll()
  }, 120_000)

  it.skipIf(unavailable !== undefined)(
    'holds the services but no simulators in the production image, run as uid 1000',
    async () => {
      const listing = await podman([
        'run',
        '--rm',
        '--network',
        'host',
        '--entrypoint',
        'sh',
        images.production,
        '-c',
        'id -u; ls /app; ls /app/services',
      ])
      const [uid, ...rest] = listing.trim().split('\n')
      expect(uid).toBe('1000')
      expect(rest).toEqual(
        expect.arrayContaining([
          'services',
          'libs',
          'schemas',
          'node_modules',
          'bank-sync',
          'invalidation-poller',
          'refresher',
          'transaction-ingest',
        ]),
      )
      expect(rest).not.toContain('simulators')
    },
  )

  it.skipIf(unavailable !== undefined)(
    'enriches raw events produced to the raw topic with the outcome the simulator promises',
    async () => {
      const runId = uniqueName('image')
      // The dead-letter cases are covered elsewhere (test/ingest); here every event has an enriched outcome.
      const events = generateRawEvents(new SimDataset(), { count: 60, seed: 7, idPrefix: runId }).filter(
        (e) => e.expected !== 'DLQ',
      )
      const outcomes = new Set(events.map((e) => e.expected))
      expect([...outcomes].sort()).toEqual(['MATCHED', 'NOT_FOUND', 'REJECTED'])
      const serde = new AvroSerde({ registry: createSchemaRegistry({ url: inject('registryUrl') }) })
      const rawCodec = serde.topic(TOPICS.transactionsRaw, 'RawTransaction')
      const producer = kit.producer()
      await producer.connect()
      await producer.send({
        topic: TOPICS.transactionsRaw,
        messages: await Promise.all(
          events.map(async (e) => ({ key: e.raw.transactionId, value: await rawCodec.encode(e.raw) })),
        ),
      })

      await waitFor(
        `the ${events.length} enriched results of ${runId}`,
        () => events.every((e) => enriched.has(e.raw.transactionId)),
        { timeoutMs: 60_000 },
      )
      for (const e of events) {
        const result = enriched.get(e.raw.transactionId)!
        expect(result.status, e.raw.transactionId).toBe(e.expected)
        if (e.expected === 'MATCHED') {
          expect(result.shopUid, e.raw.transactionId).toBe(e.expectedShopUid)
          expect(result.shop, e.raw.transactionId).not.toBeNull()
        }
      }
    },
  )

  it.skipIf(unavailable !== undefined)(
    'enriches the transactions of a bank consent granted through the consent gateway',
    async () => {
      const customerId = uniqueName('image-customer')
      await grantConsentThroughGateway(urls, customerId)
      // The first sync right after the consent publishes the account history; ingest enriches it.
      const results = await matchedBankTransactionsOf(enriched, customerId, 90_000)
      expect(results.every((r) => r.raw.accountId !== null)).toBe(true)
    },
    // The consent round trip plus the wait for the first sync's results.
    150_000,
  )
})
