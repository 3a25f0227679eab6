/**
 * Warm restart of the shop/merchant table from its checkpoint (INGEST_STATE_DIR):
 * a reader that restores the checkpoint and replays what the topics got since
 * ends with exactly the table a load from the beginning builds (the warm one
 * through the fast path that transcodes Avro bytes into the table, the cold one
 * through avsc objects; records of an evolved writer schema among them); a truncated
 * checkpoint, one of other topics, and one of a topic that was deleted and
 * recreated are each refused with a log line, and the table is loaded cold.
 */
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, rm, stat, truncate } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { avroSchema, type Merchant, type Shop } from '@tep/schemas'
import avro from 'avsc'
import { AvroSerde, confluentFrame, createKafka, ensureTopics, type KafkaLogger, type TopicSpec } from '@tep/kafka'
import { CHECKPOINT_FILE, createMerchantTables, TableReader, type MerchantTables } from '@tep/transaction-ingest'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import { registryForTests } from './ingest-harness.ts'

const kit = createKafkaTestKit()
const serde = new AvroSerde({ registry: registryForTests() })
const kafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: uniqueName('checkpoint'), logLevel: 'error' })
let stateRoot: string

beforeAll(async () => {
  stateRoot = await mkdtemp(path.join(tmpdir(), 'tep-checkpoint-it-'))
})

afterAll(async () => {
  await kit.disconnectAll()
  await rm(stateRoot, { recursive: true, force: true })
})

interface Topics {
  shops: string
  merchants: string
}

const spec = (name: string): TopicSpec => ({
  name,
  partitions: 3,
  cleanupPolicy: 'compact',
  valueSchema: null,
  key: 'test',
  configs: {},
  description: 'test',
})

async function createTableTopics(name: string): Promise<Topics> {
  const base = uniqueName(name)
  const topics = { shops: `${base}.shops`, merchants: `${base}.merchants` }
  await ensureTopics(kit.kafka, [spec(topics.shops), spec(topics.merchants)])
  return topics
}

const shopType = avroSchema('Shop').type
const merchantType = avroSchema('Merchant').type
/** Random values (avsc draws nulls, empty arrays and maps, every union branch), some with non-ASCII text. */
function shop(uid: string, i: number): Shop {
  const s = { ...(shopType.random() as unknown as Shop), uid, fetchedAt: 1_700_000_000_000 + i }
  if (i % 3 === 0 && s.location?.address) s.location.address.city = `Plzeň ${i} – Smíchov 🏪`
  return s
}
function merchant(uid: string, i: number): Merchant {
  return { ...(merchantType.random() as unknown as Merchant), uid, name: `Obchodník ${i} ✓`, fetchedAt: 1_700_000_000_000 + i }
}

/** Merchant as a later producer version writes it: one more field (with a default), so another writer schema id. */
const evolvedMerchant = avro.Type.forSchema({
  ...(merchantType.schema() as object),
  fields: [...(merchantType.schema() as { fields: object[] }).fields, { name: 'note', type: ['null', 'string'], default: null }],
} as avro.Schema)

async function produceEvolved(topics: Topics, merchants: Array<[string, Merchant]>): Promise<void> {
  // A subject of its own: only the id matters to a reader, and the subject rules are not under test here.
  const id = await serde.registerSchema(`${topics.merchants}-evolved`, evolvedMerchant.schema() as never)
  const producer = kit.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  await producer.send({
    topic: topics.merchants,
    messages: merchants.map(([key, m]) => ({ key, value: confluentFrame(id, evolvedMerchant.toBuffer({ ...m, note: `pozn. ${key}` })) })),
  })
  await producer.disconnect()
}

async function produce(topics: Topics, shops: Array<[string, Shop | null]>, merchants: Array<[string, Merchant | null]>): Promise<void> {
  const shopCodec = serde.topic(topics.shops, 'Shop')
  const merchantCodec = serde.topic(topics.merchants, 'Merchant')
  const producer = kit.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  await producer.send({
    topic: topics.shops,
    messages: await Promise.all(shops.map(async ([key, v]) => ({ key, value: v === null ? null : await shopCodec.encode(v) }))),
  })
  await producer.send({
    topic: topics.merchants,
    messages: await Promise.all(merchants.map(async ([key, v]) => ({ key, value: v === null ? null : await merchantCodec.encode(v) }))),
  })
  await producer.disconnect()
}

interface Loaded {
  tables: MerchantTables
  restored: boolean
  logs: string[]
  /** Topic records applied to the tables (a replay from the checkpoint applies only the newer ones). */
  applied: number
}

/** Loads the tables once (caught up), then stops the reader (which writes the checkpoint when `dir` is given). */
async function load(topics: Topics, dir: string | undefined, childProcess = false, fastPath = true, loaderProcesses = 1): Promise<Loaded> {
  const logs: string[] = []
  const line = (level: string) => (obj: object, msg?: string) => void logs.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`)
  const logger: KafkaLogger = { debug: () => {}, info: line('info'), warn: line('warn'), error: line('error') }
  const tables = createMerchantTables({ invalidationsEnabled: true })
  let applied = 0
  const reader = new TableReader({
    onApplied: () => void applied++,
    kafka,
    tables,
    shops: { topic: topics.shops, codec: serde.topic(topics.shops, 'Shop') },
    merchants: { topic: topics.merchants, codec: serde.topic(topics.merchants, 'Merchant') },
    logger,
    consumer: { maxWaitTimeInMs: 100 },
    ...(dir === undefined ? {} : { checkpoint: { dir } }),
    ...(fastPath ? { writerType: (id: number) => serde.writerType(id) } : {}),
    ...(childProcess
      ? {
          loader: {
            brokers: inject('kafkaBrokers'),
            clientId: uniqueName('loader'),
            registryUrl: inject('registryUrl'),
            // A split even for a small table: each process loads a share of the partitions into a shard.
            processes: loaderProcesses,
            minRecordsPerProcess: 1,
          },
        }
      : {}),
  })
  try {
    await reader.start()
    await reader.whenCaughtUp()
  } finally {
    await reader.stop()
  }
  return { tables, restored: reader.restoredFromCheckpoint, logs, applied }
}

function contents(tables: MerchantTables, shopUids: string[], merchantUids: string[]) {
  return {
    shops: shopUids.map((uid) => [uid, tables.shops.get(uid) ?? null]),
    merchants: merchantUids.map((uid) => [uid, tables.merchants.get(uid) ?? null]),
    sizes: [tables.shops.size, tables.merchants.size],
  }
}

describe('the table checkpoint', () => {
  it('restores the table and replays only what came since, ending equal to a cold load; damaged or foreign checkpoints are refused', async () => {
    const topics = await createTableTopics('checkpoint')
    const shopUids = Array.from({ length: 240 }, (_, i) => `shop-${i}`)
    const merchantUids = Array.from({ length: 40 }, (_, i) => `merchant-${i}@cz`)
    await produce(
      topics,
      shopUids.slice(0, 200).map((uid, i) => [uid, shop(uid, i)]),
      merchantUids.slice(0, 30).map((uid, i) => [uid, merchant(uid, i)]),
    )
    const dir = path.join(stateRoot, 'main')

    // First start: nothing on disk, a cold load (in the loader process, as the service does); the stop writes the checkpoint.
    const first = await load(topics, dir, true)
    expect(first.restored).toBe(false)
    expect(first.logs.some((l) => l.includes('no table checkpoint yet'))).toBe(true)
    expect(first.tables.shops.size).toBe(200)
    expect(existsSync(path.join(dir, CHECKPOINT_FILE))).toBe(true)

    // What the topics get while the instance is down: updates, deletions, new entities.
    await produce(
      topics,
      [
        ...shopUids.slice(0, 20).map((uid, i): [string, Shop] => [uid, shop(uid, 1000 + i)]),
        ...shopUids.slice(20, 35).map((uid): [string, null] => [uid, null]),
        ...shopUids.slice(200).map((uid, i): [string, Shop] => [uid, shop(uid, 2000 + i)]),
      ],
      [
        ...merchantUids.slice(0, 5).map((uid): [string, null] => [uid, null]),
        ...merchantUids.slice(30).map((uid, i): [string, Merchant] => [uid, merchant(uid, 3000 + i)]),
      ],
    )
    await produceEvolved(topics, merchantUids.slice(10, 14).map((uid, i) => [uid, merchant(uid, 4000 + i)]))

    const warm = await load(topics, dir)
    // The reference: every record decoded by avsc into an object, then encoded.
    const cold = await load(topics, undefined, false, false)
    expect(warm.restored).toBe(true)
    // Only the 75 shop and 19 merchant records written after the checkpoint were read.
    expect(warm.applied).toBe(94)
    expect(cold.applied).toBe(200 + 30 + 94)
    expect(cold.tables.merchants.get(merchantUids[11]!)?.name).toBe('Obchodník 4001 ✓')
    expect(warm.logs.some((l) => l.includes('table restored from its checkpoint'))).toBe(true)
    expect(cold.tables.shops.size).toBe(240 - 15)
    expect(contents(warm.tables, shopUids, merchantUids)).toEqual(contents(cold.tables, shopUids, merchantUids))

    // A truncated file: refused, and the table is loaded from the topics, equal again.
    const file = path.join(dir, CHECKPOINT_FILE)
    await truncate(file, (await stat(file)).size - 1_000)
    const afterTruncation = await load(topics, dir)
    expect(afterTruncation.restored).toBe(false)
    expect(afterTruncation.logs.some((l) => l.startsWith('warn') && /checkpoint not used: .*truncated/.test(l))).toBe(true)
    expect(contents(afterTruncation.tables, shopUids, merchantUids)).toEqual(contents(cold.tables, shopUids, merchantUids))
    // ... whose stop wrote a good checkpoint again.
    expect((await load(topics, dir)).restored).toBe(true)

    // A checkpoint of other topics (a copied state directory, a renamed topic).
    const other = await createTableTopics('checkpoint-other')
    await produce(other, [['other-shop', shop('other-shop', 1)]], [])
    const otherDir = path.join(stateRoot, 'other')
    await mkdir(otherDir, { recursive: true })
    await copyFile(file, path.join(otherDir, CHECKPOINT_FILE))
    const foreign = await load(other, otherDir)
    expect(foreign.restored).toBe(false)
    expect(foreign.logs.some((l) => l.startsWith('warn') && l.includes(`it is of the topics ${topics.shops} and ${topics.merchants}`))).toBe(true)
    expect(foreign.tables.shops.size).toBe(1)
    expect(foreign.tables.shops.get(shopUids[50]!)).toBeUndefined()

    // The topics deleted and recreated with less in them: the positions are past their end, the ids new.
    const admin = kit.admin()
    await admin.connect()
    await admin.deleteTopics({ topics: [topics.shops, topics.merchants] })
    await waitFor(
      'the deleted topics to be gone',
      async () => !(await admin.listTopics()).some((t) => t === topics.shops || t === topics.merchants),
    )
    await waitFor('the topics to be created again', async () => {
      await ensureTopics(kit.kafka, [spec(topics.shops), spec(topics.merchants)])
      return true
    })
    await admin.disconnect()
    await produce(topics, [[shopUids[0]!, shop(shopUids[0]!, 9)]], [])
    const recreated = await load(topics, dir)
    expect(recreated.restored).toBe(false)
    expect(recreated.logs.some((l) => l.startsWith('warn') && /checkpoint not used: topic .* was recreated/.test(l))).toBe(true)
    expect(recreated.tables.shops.size).toBe(1)
    expect(recreated.tables.merchants.size).toBe(0)
  })

  it('loaded by several loader processes (a shard each), answers as a load by one, also after a restart and the records since', async () => {
    const topics = await createTableTopics('sharded')
    const shopUids = Array.from({ length: 300 }, (_, i) => `shop-${i}`)
    const merchantUids = Array.from({ length: 60 }, (_, i) => `merchant-${i}@cz`)
    await produce(
      topics,
      shopUids.slice(0, 260).map((uid, i) => [uid, shop(uid, i)]),
      merchantUids.slice(0, 50).map((uid, i) => [uid, merchant(uid, i)]),
    )
    const dir = path.join(stateRoot, 'sharded')
    const split = await load(topics, dir, true, true, 3)
    // Three partitions a topic, three processes: one shard each, every entry decoded with its own shard's pools.
    expect(split.tables.shops.shards).toBe(3)
    expect(split.logs.some((l) => l.includes('"loaderProcesses":3'))).toBe(true)
    const single = await load(topics, undefined)
    expect(single.tables.shops.shards).toBe(1)
    expect(contents(split.tables, shopUids, merchantUids)).toEqual(contents(single.tables, shopUids, merchantUids))

    // Updates of entries of every shard, deletions, new entries: the restart restores the shards and replays them.
    await produce(
      topics,
      [
        ...shopUids.slice(0, 30).map((uid, i): [string, Shop] => [uid, shop(uid, 5000 + i)]),
        ...shopUids.slice(30, 50).map((uid): [string, null] => [uid, null]),
        ...shopUids.slice(260).map((uid, i): [string, Shop] => [uid, shop(uid, 6000 + i)]),
      ],
      merchantUids.slice(0, 6).map((uid): [string, null] => [uid, null]),
    )
    const warm = await load(topics, dir)
    expect(warm.restored).toBe(true)
    expect(warm.tables.shops.shards).toBe(3)
    const cold = await load(topics, undefined, false, false)
    expect(cold.tables.shops.size).toBe(300 - 20)
    expect(contents(warm.tables, shopUids, merchantUids)).toEqual(contents(cold.tables, shopUids, merchantUids))
  })
})
