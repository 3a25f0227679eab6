import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { ClusterTopics, Kafka } from '@tep/kafka'
import { afterEach, describe, expect, it } from 'vitest'
import { createMerchantTables } from './snapshot-table.ts'
import { CHECKPOINT_FILE } from './table-checkpoint.ts'
import { TableCheckpointer } from './table-checkpointer.ts'

const identity: ClusterTopics = {
  clusterId: 'cluster-1',
  topics: new Map([
    ['shops', { name: 'shops', id: 'shops-id', partitions: [{ low: 0n, high: 10n }] }],
    ['merchants', { name: 'merchants', id: 'merchants-id', partitions: [{ low: 0n, high: 4n }] }],
  ]),
}
// Never used: every test gives its own `describe`.
const kafka = {} as Kafka
const dirs: string[] = []

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tep-checkpointer-'))
  dirs.push(dir)
  return dir
}

function checkpointer(dir: string, describe: () => Promise<ClusterTopics>, onWaiting?: (reason: string) => void) {
  return new TableCheckpointer({
    config: { dir },
    kafka,
    tables: createMerchantTables({ invalidationsEnabled: true }),
    shopsTopic: 'shops',
    merchantsTopic: 'merchants',
    describe,
    ...(onWaiting === undefined ? {} : { onWaiting }),
  })
}

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

describe('TableCheckpointer at start', () => {
  it('waits for a cluster that does not answer yet and then restores the checkpoint (no cold load)', async () => {
    const dir = await stateDir()
    const written = await checkpointer(dir, async () => identity).save(
      () => ({ 'shops:0': '10', 'merchants:0': '4' }),
      (fn) => fn(),
    )
    expect(written).toBe(true)

    let calls = 0
    const waiting: string[] = []
    const restarted = checkpointer(
      dir,
      async () => {
        calls += 1
        if (calls <= 2) throw new Error('connect ECONNREFUSED 127.0.0.1:9092')
        return identity
      },
      (reason) => waiting.push(reason),
    )
    const positions = await restarted.restore()
    expect(positions).toEqual(new Map([['shops:0', 10n], ['merchants:0', 4n]]))
    expect(waiting).toHaveLength(2)
    expect(waiting[0]).toMatch(/waiting for the Kafka cluster .*ECONNREFUSED/)
  })

  it('ends the wait when the reader stops, with nothing restored', async () => {
    const dir = await stateDir()
    const stop = new AbortController()
    const restarted = checkpointer(
      dir,
      async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:9092')
      },
      () => stop.abort(),
    )
    await expect(restarted.restore(stop.signal)).resolves.toBeUndefined()
  })
  it('with an unreadable checkpoint, still waits for the cluster before giving up, and stops asking once it answered', async () => {
    const dir = await stateDir()
    await writeFile(path.join(dir, CHECKPOINT_FILE), 'not a checkpoint at all')
    let calls = 0
    const waiting: string[] = []
    const restarted = checkpointer(
      dir,
      async () => {
        calls += 1
        if (calls <= 2) throw new Error('connect ECONNREFUSED 127.0.0.1:9092')
        return identity
      },
      (reason) => waiting.push(reason),
    )
    await expect(restarted.restore()).resolves.toBeUndefined()
    // Resolved only after the cluster answered: no describe, and no "waiting" message, after that.
    expect(calls).toBe(3)
    expect(waiting).toHaveLength(2)
  })
})
