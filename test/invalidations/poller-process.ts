/**
 * The invalidation poller as a separate process, so that a test can kill it
 * with SIGKILL mid-feed. Configured by environment (set by the test); prints
 * one JSON line per committed page to stdout.
 */
import { createEnrichmentClient } from '@tep/enrichment-client'
import { enrichmentFeed, startInvalidationPoller } from '@tep/invalidation-poller'
import { AvroSerde, createKafka, createSchemaRegistry } from '@tep/kafka'
import { createLogger } from '@tep/observability'

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === '') throw new Error(`poller-process needs ${name}`)
  return value
}

const logger = createLogger({ name: 'poller-process', level: 'warn', destination: process.stderr })
const client = createEnrichmentClient({
  baseUrl: env('ENRICHMENT_API_URL'),
  credentials: {
    type: 'oauth',
    clientId: env('ENRICHMENT_CLIENT_ID'),
    clientSecret: env('ENRICHMENT_CLIENT_SECRET'),
  },
})
const poller = await startInvalidationPoller({
  kafka: createKafka(
    { brokers: env('KAFKA_BROKERS').split(','), clientId: 'poller-process', logLevel: 'error' },
    logger,
  ),
  serde: new AvroSerde({ registry: createSchemaRegistry({ url: env('SCHEMA_REGISTRY_URL') }) }),
  feed: enrichmentFeed(client),
  levels: ['shop', 'merchant', 'handle'],
  pageSize: Number(env('PAGE_SIZE')),
  pollIntervalMs: 3_600_000,
  startAt: new Date(0),
  transactionalId: env('TRANSACTIONAL_ID'),
  topics: { items: env('ITEMS_TOPIC'), cursor: env('CURSOR_TOPIC') },
  logger,
  onPageCommitted: ({ cursor, items }) =>
    process.stdout.write(`${JSON.stringify({ lastItemId: cursor.lastItemId, items: items.length })}\n`),
})
process.stdout.write(
  `${JSON.stringify({ started: true, position: poller.position()?.lastItemId ?? null })}\n`,
)
await poller.done
