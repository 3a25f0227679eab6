/**
 * createReplayingGroupMember (libs/kafka/src/platformatic/replaying-group-member.ts):
 * a group member that never commits and reads each assigned partition read_committed
 * from the beginning after every assignment; a static member that stops gracefully
 * leaves the group, so its partitions move at once.
 */
import { afterAll, describe, expect, inject, it } from 'vitest'
import {
  createKafka,
  createReplayingGroupMember,
  type ReplayBatch,
  type ReplayingGroupMember,
} from '@tep/kafka'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { abortingProducers, writeAbortedCommittedAborted, writeInterleavedAborts } from './aborted-transaction-shapes.ts'

const kit = createKafkaTestKit()
const kafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: uniqueName('replaying-member'), logLevel: 'error' })
const members: ReplayingGroupMember[] = []
afterAll(async () => {
  await Promise.all(members.map((m) => m.stop()))
  await kit.disconnectAll()
})

/** Everything one member was told, and promises for what the test waits on. */
class Recorder {
  readonly assignments: number[][] = []
  readonly values: Array<{ partition: number; value: string; assignment: number }> = []
  readonly next = new Map<number, bigint>()
  #waiters: Array<() => void> = []

  onAssigned = (tps: Array<{ partition: number }>) => {
    this.assignments.push(tps.map((tp) => tp.partition))
    this.next.clear()
    this.#wake()
  }

  onBatch = (batch: ReplayBatch) => {
    for (const r of batch.records)
      this.values.push({ partition: batch.partition, value: r.value?.toString() ?? '', assignment: this.assignments.length })
    this.next.set(batch.partition, batch.nextOffset)
    this.#wake()
  }

  async until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const v = probe()
      if (v !== undefined && v !== false) return v
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; assignments ${JSON.stringify(this.assignments)}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now())
        this.#waiters.push(() => (clearTimeout(timer), resolve()))
      })
    }
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w()
  }
}

async function endOffsets(topic: string): Promise<Map<number, bigint>> {
  const admin = kit.admin()
  await admin.connect()
  const offsets = await admin.fetchTopicOffsets(topic)
  return new Map(offsets.map((o) => [o.partition, BigInt(o.high)]))
}

describe('a replaying group member', () => {
  it('hands over only committed records, and progress up to the end including the markers', async () => {
    const topic = uniqueName('replay-committed')
    await kit.createTopics([topic], 1)
    // Interleaved aborts of two producers, then one producer aborted / committed / aborted.
    const producers = await abortingProducers(kit, topic)
    await writeInterleavedAborts(topic, producers)
    await writeAbortedCommittedAborted(topic, producers.a)
    // The partition ends in an abort marker: only markers count for the last offsets.
    const end = (await endOffsets(topic)).get(0)!

    const seen = new Recorder()
    const member = createReplayingGroupMember({ kafka, groupId: uniqueName('replay-committed'), topics: [topic], heartbeatIntervalMs: 1_000, ...seen })
    members.push(member)
    await member.start()
    await seen.until('progress to the end offset', () => (seen.next.get(0) ?? 0n) >= end)
    expect(seen.assignments).toEqual([[0]])
    expect(seen.values.map((v) => v.value)).toEqual(['a2 committed'])
    expect(seen.next.get(0)).toBe(end)
  })

  it('hands a batch over again after onBatch threw', async () => {
    const topic = uniqueName('replay-redeliver')
    await kit.createTopics([topic], 1)
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ value: 'r0' }, { value: 'r1' }] })
    const calls: string[][] = []
    let redelivered!: () => void
    const twice = new Promise<void>((resolve) => (redelivered = resolve))
    const member = createReplayingGroupMember({
      kafka,
      groupId: uniqueName('replay-redeliver'),
      topics: [topic],
      heartbeatIntervalMs: 1_000,
      onAssigned: () => {},
      onBatch: (batch) => {
        calls.push(batch.records.map((r) => r.value?.toString() ?? ''))
        if (calls.length === 1) throw new Error('first delivery fails')
        redelivered()
      },
    })
    members.push(member)
    await member.start()
    await twice
    expect(calls[1]).toEqual(calls[0])
    expect(calls[0]).toContain('r0')
  })

  it('re-reads kept partitions after a rebalance; a stopped static member hands its partitions over at once', async () => {
    const topic = uniqueName('replay-static')
    await kit.createTopics([topic], 2)
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ partition: 0, value: 'p0' }, { partition: 1, value: 'p1' }] })
    const groupId = uniqueName('replay-static')
    const sessionTimeoutMs = 30_000
    const heartbeatIntervalMs = 1_000
    const seenA = new Recorder()
    const a = createReplayingGroupMember({ kafka, groupId, topics: [topic], groupInstanceId: uniqueName('static-a'), sessionTimeoutMs, heartbeatIntervalMs, ...seenA })
    members.push(a)
    await a.start()
    await seenA.until('a: both records', () => seenA.values.length >= 2)
    expect(seenA.assignments).toEqual([[0, 1]])

    const seenB = new Recorder()
    const b = createReplayingGroupMember({ kafka, groupId, topics: [topic], sessionTimeoutMs, heartbeatIntervalMs, ...seenB })
    members.push(b)
    await b.start()
    await seenA.until('a: one partition after the rebalance', () => seenA.assignments.at(-1)?.length === 1)
    await seenB.until('b: one partition', () => seenB.assignments.at(-1)?.length === 1)
    const kept = seenA.assignments.at(-1)![0]!
    // The partition A kept is read again from its first record in the new assignment.
    await seenA.until('a: the kept partition re-read', () => seenA.values.some((v) => v.partition === kept && v.assignment === 2))

    const stoppedAt = Date.now()
    await a.stop()
    await seenB.until('b: both partitions after a left', () => seenB.assignments.at(-1)?.length === 2)
    const movedAfterMs = Date.now() - stoppedAt
    console.info(`a stopped static member's partitions moved after ${movedAfterMs} ms`)
    // Without a LeaveGroup, B would get them only once A's session expired: at least
    // sessionTimeout - heartbeat (29 s) after the stop. With it, one rebalance (about a
    // heartbeat, a few seconds on a loaded machine). The bound is far from both.
    expect(movedAfterMs).toBeLessThan(sessionTimeoutMs - heartbeatIntervalMs - 12_000)
    await seenB.until('b: both records', () => new Set(seenB.values.filter((v) => v.assignment === seenB.assignments.length).map((v) => v.value)).size === 2)
  })
})
