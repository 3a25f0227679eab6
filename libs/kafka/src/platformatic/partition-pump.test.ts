import { PipelineError } from '@tep/errors'
import { describe, expect, it } from 'vitest'
import type { OutputRecord, PipelineRecord } from '../pipeline-types.ts'
import type { InputMessage } from './input-message.ts'
import { newPartitionState, type PartitionState } from './partition-state.ts'
import { PartitionPump } from './partition-pump.ts'

const member = { groupId: 'g', generationId: 1, memberId: 'm', coordinatorId: 1 }
const at = (offset: number): InputMessage => ({
  topic: 'raw',
  partition: 0,
  key: Buffer.from(`k${offset}`),
  value: Buffer.from(`v${offset}`),
  offset: BigInt(offset),
  timestamp: 0n,
  leaderEpoch: 0,
  headerEntries: [],
  consumer: member,
})
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => at(from + i))

type Transform = (record: PipelineRecord) => OutputRecord | Promise<OutputRecord>

function setUp(transform: Transform) {
  const s = newPartitionState('raw', 0)
  s.floorKnown = true
  const parts = new Map<string, PartitionState>([[s.key, s]])
  const paused: { offset: bigint; error: unknown }[] = []
  const pump = new PartitionPump(transform, new AbortController().signal, { maxInFlight: 4, maxPerTxn: 100, highWater: 1_000 }, {
    parts,
    isRunning: () => true,
    pauseAndBackOff: (state, offset, error) => {
      paused.push({ offset, error })
      state.paused = true
      state.queue.clear()
      state.window = []
    },
    finished: () => undefined,
    stream: () => undefined,
  })
  const doneOffsets = () => s.done.map((d) => d.message.offset)
  return { s, pump, paused, doneOffsets }
}

const identity: Transform = (r) => ({ topic: 'out', key: r.key, value: r.value })
const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('PartitionPump', () => {
  it('takes each offset once: records the stream fetches again are not queued twice', () => {
    const { pump, s, doneOffsets } = setUp(identity)
    pump.onRecords('raw', 0, range(0, 5))
    pump.onRecords('raw', 0, range(1, 3)) // all seen before: the position must not move back
    expect(s.position).toBe(5n)
    pump.onRecords('raw', 0, range(3, 7))
    expect(doneOffsets()).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n])
    expect(s.position).toBe(7n)
  })

  it('sends a record failure to the dead letters and pauses at a systemic one, nothing after it done', () => {
    const { pump, s, paused } = setUp((r) => {
      if (r.offset === '1') throw new PipelineError('bad record', { code: 'BAD', retriable: false })
      if (r.offset === '3') throw new Error('registry down')
      return identity(r)
    })
    pump.onRecords('raw', 0, range(0, 6))
    expect(s.done.map((d) => [d.message.offset, d.outcome.kind])).toEqual([
      [0n, 'outputs'],
      [1n, 'dead-letter'],
      [2n, 'outputs'],
    ])
    expect(paused.map((p) => p.offset)).toEqual([3n])
  })

  it('keeps the input order when a synchronous answer follows a pending promise', async () => {
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const { pump, doneOffsets } = setUp((r) => (r.offset === '1' ? gate.then(() => identity(r)) : identity(r)))
    pump.onRecords('raw', 0, range(0, 4))
    // 0 answered at once; 1 pending, so 2 and 3 wait behind it even though they answer synchronously.
    expect(doneOffsets()).toEqual([0n])
    await settle()
    expect(doneOffsets()).toEqual([0n])
    release()
    await settle()
    expect(doneOffsets()).toEqual([0n, 1n, 2n, 3n])
  })
})
