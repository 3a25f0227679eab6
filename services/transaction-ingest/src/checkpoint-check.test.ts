import { describe, expect, it } from 'vitest'
import { checkpointMismatch, type CheckpointExpectations } from './checkpoint-check.ts'
import type { CheckpointHeader } from './table-checkpoint.ts'

const NOW = 1_800_000_000_000
const header: CheckpointHeader = {
  format: 2,
  byteOrder: 'LE',
  writtenAt: NOW - 60_000,
  clusterId: 'cluster-a',
  topics: { shops: { name: 'shops', id: 'id-s' }, merchants: { name: 'merchants', id: 'id-m' } },
  layout: 'layout-1',
  positions: { 'shops:0': '100', 'shops:1': '0', 'merchants:0': '50' },
  shards: [
    {
      poolsBytes: 2,
      tables: {
        shops: { chunks: 0, chunkPos: 0, capacity: 1024, size: 0, deleted: 0, liveBytes: 0, garbageBytes: 0 },
        merchants: { chunks: 0, chunkPos: 0, capacity: 1024, size: 0, deleted: 0, liveBytes: 0, garbageBytes: 0 },
      },
    },
  ],
}

function expected(overrides: Partial<CheckpointExpectations> = {}): CheckpointExpectations {
  return {
    shopsTopic: 'shops',
    merchantsTopic: 'merchants',
    layout: 'layout-1',
    now: NOW,
    maxAgeMs: 3_600_000,
    cluster: {
      clusterId: 'cluster-a',
      topics: new Map([
        ['shops', { name: 'shops', id: 'id-s', partitions: [{ low: 0n, high: 150n }, { low: 0n, high: 0n }] }],
        ['merchants', { name: 'merchants', id: 'id-m', partitions: [{ low: 0n, high: 50n }] }],
      ]),
    },
    ...overrides,
  }
}

function withTopic(name: string, change: { id?: string; partitions?: Array<{ low: bigint; high: bigint }> }) {
  const cluster = expected().cluster
  const topic = cluster.topics.get(name)!
  cluster.topics.set(name, { ...topic, ...change })
  return cluster
}

describe('whether a table checkpoint still describes the topics', () => {
  it('accepts a checkpoint of these topics within their logs (at the end included)', () => {
    expect(checkpointMismatch(header, expected())).toBeUndefined()
  })

  it('refuses a checkpoint of other topics', () => {
    expect(checkpointMismatch(header, expected({ shopsTopic: 'other.shops' }))).toMatch(/of the topics shops and merchants, this instance reads other.shops/)
  })

  it('refuses a checkpoint of another cluster', () => {
    expect(checkpointMismatch(header, expected({ cluster: { ...expected().cluster, clusterId: 'cluster-b' } }))).toMatch(/cluster cluster-a, this is cluster cluster-b/)
  })

  it('refuses a checkpoint of a topic that was recreated (new topic id) or deleted', () => {
    expect(checkpointMismatch(header, expected({ cluster: withTopic('merchants', { id: 'id-new' }) }))).toMatch(/merchants was recreated/)
    const cluster = expected().cluster
    cluster.topics.delete('shops')
    expect(checkpointMismatch(header, expected({ cluster }))).toMatch(/shops does not exist/)
  })

  it('refuses offsets past the end of a partition (truncated or recreated under the same id)', () => {
    const cluster = withTopic('shops', { partitions: [{ low: 0n, high: 99n }, { low: 0n, high: 0n }] })
    expect(checkpointMismatch(header, expected({ cluster }))).toMatch(/offset 100 of shops:0 is past the end of the log \(99\)/)
  })

  it('refuses offsets below the log start (records deleted since)', () => {
    const cluster = withTopic('merchants', { partitions: [{ low: 60n, high: 80n }] })
    expect(checkpointMismatch(header, expected({ cluster }))).toMatch(/offset 50 of merchants:0 is below the log start \(60\)/)
  })

  it('refuses a partition that no longer exists', () => {
    const cluster = withTopic('shops', { partitions: [{ low: 0n, high: 150n }] })
    expect(checkpointMismatch(header, expected({ cluster }))).toMatch(/partition shops:1 does not exist/)
  })

  it('refuses tables encoded by another schema or codec version', () => {
    expect(checkpointMismatch(header, expected({ layout: 'layout-2' }))).toMatch(/encoded for other schemas/)
  })

  it('refuses a checkpoint older than the age allowed', () => {
    expect(checkpointMismatch(header, expected({ maxAgeMs: 30_000 }))).toMatch(/1 min old, above the 1 min allowed|min old/)
    expect(checkpointMismatch({ ...header, writtenAt: NOW - 2 * 3_600_000 }, expected())).toMatch(/120 min old, above the 60 min allowed/)
  })
})
