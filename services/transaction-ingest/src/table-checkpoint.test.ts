import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { avroSchema, type Merchant, type Shop } from '@tep/schemas'
import { existsSync } from 'node:fs'
import type { Kafka } from '@tep/kafka'
import { CheckpointRefused } from './errors.ts'
import { TableCheckpointer } from './table-checkpointer.ts'
import { createMerchantTables, type MerchantTables } from './snapshot-table.ts'
import {
  CHECKPOINT_FILE,
  readCheckpointBody,
  readCheckpointHeader,
  writeCheckpoint,
  type CheckpointContent,
} from './table-checkpoint.ts'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tep-checkpoint-test-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Tables with random shops and merchants (avsc draws nulls, unicode, empty arrays), some replaced and deleted. */
function filledTables(n: number): MerchantTables {
  const tables = createMerchantTables({ invalidationsEnabled: true })
  const shopType = avroSchema('Shop').type
  const merchantType = avroSchema('Merchant').type
  for (let i = 0; i < n; i++) {
    const s = { ...(shopType.random() as unknown as Shop), uid: `s${i}`, fetchedAt: 1_700_000_000_000 + i }
    tables.shops.applyFromTopic(s.uid, s)
    const m = { ...(merchantType.random() as unknown as Merchant), uid: `m${i}`, fetchedAt: 1_700_000_000_000 + i }
    tables.merchants.applyFromTopic(m.uid, m)
  }
  for (let i = 0; i < n; i += 7) tables.shops.applyFromTopic(`s${i}`, null)
  for (let i = 1; i < n; i += 5) tables.merchants.applyFromTopic(`m${i}`, { ...tables.merchants.get(`m${i}`)!, name: `réplacé ${i} 🛒` })
  return tables
}

function content(tables: MerchantTables): CheckpointContent {
  return {
    header: {
      writtenAt: 1_800_000_000_000,
      clusterId: 'cluster-a',
      topics: { shops: { name: 'shops', id: 'id-s' }, merchants: { name: 'merchants', id: 'id-m' } },
      layout: tables.layout,
      positions: { 'shops:0': '120', 'merchants:2': '7' },
    },
    state: tables.topicState(),
  }
}

function entries(tables: MerchantTables): { shops: Map<string, Shop>; merchants: Map<string, Merchant> } {
  const shops = new Map<string, Shop>()
  const merchants = new Map<string, Merchant>()
  for (let i = 0; i < 400; i++) {
    const s = tables.shops.get(`s${i}`)
    if (s !== undefined) shops.set(`s${i}`, s)
    const m = tables.merchants.get(`m${i}`)
    if (m !== undefined) merchants.set(`m${i}`, m)
  }
  return { shops, merchants }
}

describe('the table checkpoint file', () => {
  it('restores tables that hold exactly what was written, with the header as written', async () => {
    const tables = filledTables(400)
    const written = await writeCheckpoint(dir, content(tables))
    expect(written.file).toBe(path.join(dir, CHECKPOINT_FILE))
    const found = await readCheckpointHeader(dir)
    expect(found?.size).toBe(written.bytes)
    expect(found?.header.positions).toEqual({ 'shops:0': '120', 'merchants:2': '7' })
    expect(found?.header.clusterId).toBe('cluster-a')
    const restored = createMerchantTables({ invalidationsEnabled: true })
    restored.restoreState(await readCheckpointBody(dir, found!.header))
    expect(restored.shops.size).toBe(tables.shops.size)
    expect(restored.merchants.size).toBe(tables.merchants.size)
    expect(entries(restored)).toEqual(entries(tables))
    // The restored tables go on encoding with the same pools.
    const m = { ...tables.merchants.get('m2')!, name: 'after restore' }
    restored.merchants.applyFromTopic('m2', m)
    expect(restored.merchants.get('m2')).toEqual(m)
  })

  it('keeps the shards of a load by several loader processes, each with its own pools', async () => {
    // Two loaders' tables: the same uids would be impossible (partitions are disjoint), their pools differ.
    const first = filledTables(200)
    const second = createMerchantTables({ invalidationsEnabled: true })
    const shopType = avroSchema('Shop').type
    for (let i = 200; i < 400; i++) {
      const s = { ...(shopType.random() as unknown as Shop), uid: `s${i}`, fetchedAt: 1_700_000_000_000 + i }
      second.shops.applyFromTopic(s.uid, s)
    }
    const tables = createMerchantTables({ invalidationsEnabled: true })
    tables.restoreState([structuredClone(first.exportState()), structuredClone(second.exportState())])
    expect(tables.shops.shards).toBe(2)
    await writeCheckpoint(dir, content(tables))
    const found = await readCheckpointHeader(dir)
    expect(found?.header.shards).toHaveLength(2)
    const restored = createMerchantTables({ invalidationsEnabled: true })
    restored.restoreState(await readCheckpointBody(dir, found!.header))
    expect(restored.shops.shards).toBe(2)
    expect(restored.shops.size).toBe(tables.shops.size)
    expect(entries(restored)).toEqual(entries(tables))
  })

  it('leaves what the API gave out of the checkpoint (the topics never had it)', async () => {
    const tables = filledTables(50)
    const fetched = { ...tables.shops.get('s1')!, uid: 'api-only', fetchedAt: 1_900_000_000_000 }
    tables.shops.putFetched(fetched)
    tables.shops.putFetched({ ...tables.shops.get('s2')!, url: 'https://api.example/s2', fetchedAt: 1_900_000_000_000 })
    tables.shops.delete('s3')
    expect(tables.shops.get('api-only')).toEqual(fetched)
    expect(tables.shops.get('s3')).toBeUndefined()
    await writeCheckpoint(dir, content(tables))
    const restored = createMerchantTables({ invalidationsEnabled: true })
    restored.restoreState(await readCheckpointBody(dir, (await readCheckpointHeader(dir))!.header))
    expect(restored.shops.get('api-only')).toBeUndefined()
    expect(restored.shops.get('s2')?.url).not.toBe('https://api.example/s2')
    expect(restored.shops.get('s3')?.uid).toBe('s3')
    // 50 shops, every 7th deleted by a tombstone: 42 on the topic; the API added one and removed one.
    expect(restored.shops.size).toBe(42)
    expect(tables.shops.size).toBe(42)
  })

  it('is replaced atomically: the previous file stays whole until the new one is complete', async () => {
    await writeCheckpoint(dir, content(filledTables(20)))
    const second = filledTables(40)
    await writeCheckpoint(dir, { ...content(second), header: { ...content(second).header, positions: { 'shops:0': '999' } } })
    const found = await readCheckpointHeader(dir)
    expect(found?.header.positions).toEqual({ 'shops:0': '999' })
    const restored = createMerchantTables({ invalidationsEnabled: true })
    restored.restoreState(await readCheckpointBody(dir, found!.header))
    expect(restored.shops.size).toBe(second.shops.size)
  })

  it('says there is none when the directory has no checkpoint', async () => {
    expect(await readCheckpointHeader(dir)).toBeUndefined()
  })

  it('refuses a truncated file', async () => {
    const { bytes } = await writeCheckpoint(dir, content(filledTables(100)))
    await truncate(path.join(dir, CHECKPOINT_FILE), bytes - 100)
    await expect(readCheckpointHeader(dir)).rejects.toThrow(/truncated/)
    await truncate(path.join(dir, CHECKPOINT_FILE), 10)
    await expect(readCheckpointHeader(dir)).rejects.toThrow(CheckpointRefused)
  })

  it('refuses a file whose content was damaged, by its checksum', async () => {
    const { bytes } = await writeCheckpoint(dir, content(filledTables(100)))
    const file = path.join(dir, CHECKPOINT_FILE)
    const raw = await readFile(file)
    const at = Math.floor(bytes * 0.7)
    raw[at] = (raw[at] as number) ^ 0x10
    await writeFile(file, raw)
    const found = await readCheckpointHeader(dir)
    await expect(readCheckpointBody(dir, found!.header)).rejects.toThrow(/checksum/)
  })

  it('refuses a file that is not a checkpoint or of another format', async () => {
    await writeFile(path.join(dir, CHECKPOINT_FILE), 'x'.repeat(1000))
    await expect(readCheckpointHeader(dir)).rejects.toThrow(/not a table checkpoint/)
    await writeCheckpoint(dir, content(filledTables(5)))
    const raw = await readFile(path.join(dir, CHECKPOINT_FILE))
    raw.writeUInt32LE(999, 8)
    await writeFile(path.join(dir, CHECKPOINT_FILE), raw)
    await expect(readCheckpointHeader(dir)).rejects.toThrow(/format 999/)
  })

  it('removes what writes cut short by a kill left behind, and loads cold when the Kafka client is unusable (a setting, not an outage: nothing to wait for)', async () => {
    await writeCheckpoint(dir, content(filledTables(5)))
    const leftover = path.join(dir, `${CHECKPOINT_FILE}.4242.tmp`)
    await writeFile(leftover, 'half a checkpoint')
    const warnings: string[] = []
    const logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (_obj: object, msg?: string) => void warnings.push(msg ?? '') }
    const checkpointer = new TableCheckpointer({
      config: { dir },
      // Not a client made by createKafka: describing the topics fails.
      kafka: {} as Kafka,
      tables: createMerchantTables({ invalidationsEnabled: true }),
      shopsTopic: 'shops',
      merchantsTopic: 'merchants',
      logger,
    })
    expect(await checkpointer.restore()).toBeUndefined()
    expect(existsSync(leftover)).toBe(false)
    expect(existsSync(path.join(dir, CHECKPOINT_FILE))).toBe(true)
    expect(warnings).toEqual(['table checkpoint could not be read; loading the table from the topics'])
  })
})
