import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ClusterTopics, Kafka } from '@tep/kafka'
import { exampleMerchant, exampleShop } from '@tep/schemas'
import { afterEach, describe, expect, it } from 'vitest'
import { LmdbCommitter } from './lmdb-committer.ts'
import { restoreLmdbPositions } from './lmdb-restore.ts'
import { openLmdbMerchantTables, type LmdbMerchantTables } from './lmdb-tables.ts'

const identity: ClusterTopics = {
  clusterId: 'cluster-1',
  topics: new Map([
    ['shops', { name: 'shops', id: 'shops-id', partitions: [{ low: 0n, high: 10n }] }],
    ['merchants', { name: 'merchants', id: 'merchants-id', partitions: [{ low: 0n, high: 4n }] }],
  ]),
}
const kafka = {} as Kafka
const dirs: string[] = []
const open: LmdbMerchantTables[] = []

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tep-lmdb-store-'))
  dirs.push(dir)
  return dir
}

function tables(dir: string): LmdbMerchantTables {
  const t = openLmdbMerchantTables(dir, { invalidationsEnabled: true })
  open.push(t)
  return t
}

afterEach(async () => {
  for (const t of open.splice(0)) await t.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

function restore(t: LmdbMerchantTables, cluster: ClusterTopics, now = Date.now) {
  return restoreLmdbPositions({ tables: t, kafka, shopsTopic: 'shops', merchantsTopic: 'merchants', describe: async () => cluster, now })
}

describe('the LMDB table store at start', () => {
  it('restores its positions and tables when they still describe the topics, and loads cold otherwise (emptied)', async () => {
    const dir = await stateDir()
    const first = tables(dir)
    expect(await restore(first, identity)).toBeUndefined()
    first.shops.applyFromTopic('s1', { ...exampleShop(), uid: 's1', fetchedAt: 1 })
    first.merchants.applyFromTopic('m1', { ...exampleMerchant(), uid: 'm1', fetchedAt: 1 })
    await first.commit([['shops:0', 10n], ['merchants:0', 4n]])
    await first.close()

    const warm = tables(dir)
    expect(await restore(warm, identity)).toEqual(new Map([['shops:0', 10n], ['merchants:0', 4n]]))
    expect(warm.shops.get('s1')?.uid).toBe('s1')
    expect(warm.merchants.size).toBe(1)
    await warm.close()

    // The shops topic deleted and created again: its offsets mean other records now.
    const recreated: ClusterTopics = { ...identity, topics: new Map([...identity.topics, ['shops', { name: 'shops', id: 'new-id', partitions: [{ low: 0n, high: 10n }] }]]) }
    const cold = tables(dir)
    expect(await restore(cold, recreated)).toBeUndefined()
    expect(cold.shops.size).toBe(0)
    expect(cold.merchants.size).toBe(0)
    expect(cold.storedState()).toMatchObject({ positions: {}, identity: { topics: { shops: { id: 'new-id' } } } })
  })

  it('refuses a store older than the allowed age and one whose offset is past the end of its log', async () => {
    const dir = await stateDir()
    const t = tables(dir)
    await restore(t, identity)
    t.shops.applyFromTopic('s1', { ...exampleShop(), uid: 's1', fetchedAt: 1 })
    await t.commit([['shops:0', 10n]])
    expect(await restore(t, identity, () => Date.now() + 13 * 3_600_000)).toBeUndefined()
    expect(t.shops.size).toBe(0)
    t.shops.applyFromTopic('s1', { ...exampleShop(), uid: 's1', fetchedAt: 1 })
    await t.commit([['shops:0', 11n]])
    expect(await restore(t, identity)).toBeUndefined()
    expect(t.shops.get('s1')).toBeUndefined()
  })

  it('never holds a position ahead of its records after a kill -9 in the middle of writing (five kills)', async () => {
    const dir = await stateDir()
    const KEYS = 700
    let previous = 0
    for (let kill = 1; kill <= 5; kill++) {
      const writer = spawn(process.execPath, [fileURLToPath(new URL('./crash-writer.fixture.ts', import.meta.url)), dir], { stdio: ['ignore', 'pipe', 'inherit'] })
      const exited = new Promise((resolve) => writer.once('exit', resolve))
      // Killed after a few commits (more each time), while the writer keeps committing.
      let committed = 0
      await new Promise<void>((resolve) => {
        writer.stdout.on('data', (d: Buffer) => {
          committed += d.toString().split('\n').filter(Boolean).length
          if (committed >= 4 * kill) resolve()
        })
      })
      writer.kill('SIGKILL')
      await exited
      const t = tables(dir)
      const position = Number(t.storedState().positions['shops:0'])
      expect(position).toBeGreaterThan(previous)
      previous = position
      // Every record before the position is there (or a later one of the same shop): none is missing.
      for (let offset = Math.max(0, position - KEYS); offset < position; offset++)
        expect(t.shops.fetchedAtOf(`s${offset % KEYS}`)).toBeGreaterThanOrEqual(offset)
      await t.close()
    }
  }, 60_000)
})

describe('the LMDB table store after a failed or an empty run', () => {
  it('writes no position after a failed commit: a later batch would claim the records that were lost', async () => {
    const dir = await stateDir()
    const t = tables(dir)
    await restore(t, identity)
    t.shops.applyFromTopic('a', { ...exampleShop(), uid: 'a', fetchedAt: 1 })
    await t.commit([['shops:0', 1n]])
    // LMDB refuses keys over its limit (1978 bytes): this batch is not stored.
    const long = 'x'.repeat(3000)
    t.shops.applyFromTopic(long, { ...exampleShop(), uid: long, fetchedAt: 1 })
    t.shops.applyFromTopic('b', { ...exampleShop(), uid: 'b', fetchedAt: 1 })
    await expect(t.commit([['shops:0', 3n]])).rejects.toThrow()
    t.shops.applyFromTopic('c', { ...exampleShop(), uid: 'c', fetchedAt: 1 })
    await expect(t.commit([['shops:0', 4n]])).rejects.toThrow(/earlier write .* failed/)
    expect(t.storedState().positions).toEqual({ 'shops:0': '1' })
  })

  it('a stop before any batch was read leaves the stored positions and their time as they were', async () => {
    const dir = await stateDir()
    const first = openLmdbMerchantTables(dir, { invalidationsEnabled: true, now: () => 1_000 })
    first.shops.applyFromTopic('a', { ...exampleShop(), uid: 'a', fetchedAt: 1 })
    await first.commit([['shops:0', 1n]])
    await first.close()
    const later = openLmdbMerchantTables(dir, { invalidationsEnabled: true, now: () => 5_000 })
    await new LmdbCommitter(later).close(new Map([['shops:0', 1n]]))
    const again = tables(dir)
    expect(again.storedState()).toMatchObject({ writtenAt: 1_000, positions: { 'shops:0': '1' } })
  })
})
