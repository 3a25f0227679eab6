import { ConfigResourceTypes } from '@platformatic/kafka'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaAdmin, ensureTopics, topicCatalog, TopicConfigMismatchError, TOPICS, type TopicSpec } from '@tep/kafka'
import { createKafkaTestKit, uniqueName, type TestAdmin } from '../support/kafka-test-kit.ts'

const kit = createKafkaTestKit()
let admin: TestAdmin
let configAdmin: ReturnType<typeof createKafkaAdmin>

/** The real catalog under unique names, so the test never touches the shared topics. */
function uniqueCatalog(): TopicSpec[] {
  const suffix = uniqueName('cat')
  return topicCatalog({ partitions: 2 }).map((t) => ({ ...t, name: `${t.name}.${suffix}` }))
}

async function configsOf(name: string, keys: string[]): Promise<Record<string, string>> {
  const [resource] = await configAdmin.describeConfigs({
    includeSynonyms: false,
    resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: name, configurationKeys: keys }],
  })
  return Object.fromEntries(resource!.configs.map((e) => [e.name, e.value ?? '']))
}

beforeAll(async () => {
  admin = kit.admin()
  configAdmin = createKafkaAdmin(kit.kafka)
})
afterAll(async () => {
  await configAdmin.close()
  await kit.disconnectAll()
})

describe('ensureTopics', () => {
  it('creates the whole catalog once and finds it complete the second time', async () => {
    const catalog = uniqueCatalog()
    const first = await ensureTopics(kit.kafka, catalog)
    expect(first.created.sort()).toEqual(catalog.map((t) => t.name).sort())
    expect(first.existing).toEqual([])

    const second = await ensureTopics(kit.kafka, catalog)
    expect(second.created).toEqual([])
    expect(second.existing.sort()).toEqual(catalog.map((t) => t.name).sort())
    expect(second.drift).toEqual([])

    const metadata = await admin.fetchTopicMetadata({ topics: catalog.map((t) => t.name) })
    for (const spec of catalog) {
      expect(metadata.topics.find((t) => t.name === spec.name)?.partitions.length, spec.name).toBe(
        spec.partitions,
      )
    }
    const shops = catalog.find((t) => t.name.startsWith(`${TOPICS.merchantShops}.`))!
    expect(
      await configsOf(shops.name, ['cleanup.policy', 'min.cleanable.dirty.ratio', 'segment.ms']),
    ).toEqual({
      'cleanup.policy': 'compact',
      'min.cleanable.dirty.ratio': '0.1',
      'segment.ms': '3600000',
    })
    const raw = catalog.find((t) => t.name.startsWith(`${TOPICS.transactionsRaw}.`))!
    expect(await configsOf(raw.name, ['cleanup.policy', 'retention.ms'])).toEqual({
      'cleanup.policy': 'delete',
      'retention.ms': String(7 * 86_400_000),
    })
    const cursor = catalog.find((t) => t.name.startsWith(`${TOPICS.merchantInvalidationsCursor}.`))!
    expect(metadata.topics.find((t) => t.name === cursor.name)?.partitions.length).toBe(1)
  })

  it('creates only what is missing when run concurrently by two instances', async () => {
    const catalog = uniqueCatalog()
    const [a, b] = await Promise.all([ensureTopics(kit.kafka, catalog), ensureTopics(kit.kafka, catalog)])
    expect([...a.created, ...a.existing].sort()).toEqual(catalog.map((t) => t.name).sort())
    expect([...b.created, ...b.existing].sort()).toEqual(catalog.map((t) => t.name).sort())
  })

  it('refuses an existing topic with the wrong partition count or cleanup policy, naming both', async () => {
    const spec: TopicSpec = { ...uniqueCatalog().find((t) => t.cleanupPolicy === 'compact')!, partitions: 3 }
    // The "wrong" topic: one partition, delete policy.
    await ensureTopics(kit.kafka, [{ ...spec, partitions: 1, cleanupPolicy: 'delete', configs: {} }])
    const error = await ensureTopics(kit.kafka, [spec]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TopicConfigMismatchError)
    expect((error as Error).message).toContain(`${spec.name} has 1 partitions, the catalog says 3`)
    expect((error as Error).message).toContain(
      `${spec.name} has cleanup.policy=delete, the catalog says compact`,
    )
  })

  it('reports other config drift without changing it', async () => {
    const spec = uniqueCatalog().find((t) => t.name.startsWith(`${TOPICS.transactionsRaw}.`))!
    await ensureTopics(kit.kafka, [{ ...spec, configs: { 'retention.ms': '3600000' } }])
    const report = await ensureTopics(kit.kafka, [spec])
    expect(report.drift).toEqual([
      { topic: spec.name, config: 'retention.ms', expected: String(7 * 86_400_000), actual: '3600000' },
    ])
    expect((await configsOf(spec.name, ['retention.ms']))['retention.ms']).toBe('3600000')
  })
})
