/**
 * The backfill's API calls go through the LiveGuard, which reads the live
 * ingest's lag from the brokers (the live group's committed offsets against
 * the live topic's end). The lag is driven here by producing to a live topic
 * and committing the live group's offsets by hand, and the clock the live rate
 * is measured with is a test clock: each look at the brokers is one check(), so
 * nothing depends on timing. The backfill's calls in flight are counted at a
 * fake enrichment client behind guardedClient, exactly as runBackfill wires it.
 */
import { guardedClient, LiveGuard } from '@tep/backfill'
import { OffsetReader } from '@tep/kafka'
import type { EnrichmentPort } from '@tep/transaction-ingest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'

const kit = createKafkaTestKit()
const liveTopic = uniqueName('bf-yield-live')
const liveGroup = uniqueName('bf-yield-group')
let offsets: OffsetReader

/** A stand-in API: each call waits until the test lets all waiting calls answer. */
function heldClient() {
  let entered = 0
  let answer: Array<() => void> = []
  const call = () =>
    new Promise<{ status: 'notFound'; handle: undefined }>((resolve) => {
      entered += 1
      answer.push(() => resolve({ status: 'notFound', handle: undefined }))
    })
  const client = { findByCardTransaction: call } as unknown as EnrichmentPort
  return {
    client,
    get entered() {
      return entered
    },
    answerAll() {
      const a = answer
      answer = []
      for (const f of a) f()
    },
  }
}

async function produce(count: number): Promise<void> {
  const producer = kit.producer()
  await producer.send({ topic: liveTopic, messages: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `v${i}`, partition: 0 })) })
}

async function commitLiveGroup(lagLeft: number): Promise<void> {
  const [end] = await offsets.topicOffsets(liveTopic)
  await offsets.setCommittedOffsets(liveGroup, liveTopic, [{ partition: 0, offset: end!.high - BigInt(lagLeft) }])
}

beforeAll(async () => {
  await kit.createTopics([liveTopic], 1)
  offsets = new OffsetReader(kit.kafka)
})

afterAll(async () => {
  await offsets?.close()
  await kit.disconnectAll()
})

describe('a backfill beside live traffic', () => {
  it('slows its API calls when the live lag grows, stops at the stop lag and comes back when the live ingest catches up', async () => {
    let now = 1_000_000
    const guard = new LiveGuard({
      offsets,
      liveGroup,
      liveTopic,
      slots: 4,
      now: () => now,
      policy: { targetLagMs: 100, stopLagMs: 1_000, stopLagRecords: 0, increase: 0.5, minShare: 0.25 },
    })
    const api = heldClient()
    const backfill = guardedClient(api.client, guard)
    const calls: Promise<unknown>[] = []
    const fire = (n: number) => {
      for (let i = 0; i < n; i++) calls.push(backfill.findByCardTransaction({ merchantId: `m${i}` }))
    }
    const look = async (advanceMs: number) => {
      now += advanceMs
      return guard.check()
    }

    // The live ingest keeps up (it committed everything): the backfill earns its full share.
    await produce(50)
    await commitLiveGroup(0)
    await look(0)
    await look(250)
    await look(250)
    expect(guard.share).toBe(1)
    fire(4)
    await waitFor('the 4 calls of the full share to reach the API', () => api.entered === 4)
    api.answerAll()
    await Promise.all(calls.splice(0))

    // 200 live records in one second, 150 of them not committed: 750 ms behind, above the target.
    await produce(200)
    await commitLiveGroup(150)
    const slowed = await look(1_000)
    expect(slowed).toMatchObject({ state: 'slowed', lagMs: 750 })
    expect(guard.share).toBe(0.5)
    const before = api.entered
    fire(4)
    await waitFor('the calls of half the share to reach the API', () => api.entered === before + 2)
    expect(api.entered - before).toBe(2)

    // The live ingest falls further behind: 1 150 records at the smoothed rate, past the stop lag.
    await produce(1_000)
    const stopped = await look(1_000)
    expect(stopped?.state).toBe('stopped')
    expect(guard.share).toBe(0)
    api.answerAll()
    const afterStop = api.entered
    // The two held calls answered and gave their slots back: nothing more starts while stopped.
    await look(0)
    expect(api.entered).toBe(afterStop)
    expect(guard.yieldingBecause).toMatch(/behind \(stop at 1000 ms\)/)

    // The live ingest catches up: the backfill restarts at its smallest share (one slot of four).
    await commitLiveGroup(0)
    await look(250)
    expect(guard.share).toBe(0.25)
    await waitFor('one waiting call to start again', () => api.entered === afterStop + 1)
    api.answerAll()
    await look(250)
    await look(250)
    expect(guard.share).toBe(1)
    await waitFor('the rest of the calls to start', () => api.entered === afterStop + 2)
    api.answerAll()
    await Promise.all(calls.splice(0))
    expect(guard.yields).toBe(1)
    const summary = guard.summary()
    // Stopped from the stop look to the catch-up look.
    expect(summary.stoppedMs).toBe(250)
    expect(summary.meanShare).toBeLessThan(1)
    await guard.stop()
  })
})
