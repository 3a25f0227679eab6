import { spawn } from 'node:child_process'
import { afterAll, describe, expect, inject, it } from 'vitest'
import type { TransactionalPipeline } from '@tep/kafka'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import {
  CommitCounter,
  loggerActingOn,
  memoryLogger,
  pipelineKafka,
  pipelineTopics,
  produceInputs,
  startPipeline,
} from './pipeline-harness.ts'
import { readTopic, valuesByPartition } from '../support/read-topic.ts'

const kit = createKafkaTestKit()
const running: TransactionalPipeline[] = []
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await kit.disconnectAll()
})

const echo = (output: string) => async (record: { key: Buffer | null; value: Buffer | null }) => ({
  topic: output,
  key: record.key,
  value: Buffer.from(`out:${record.value?.toString()}`),
})

async function committedOffsets(groupId: string, topic: string): Promise<Map<number, string>> {
  const admin = kit.admin()
  await admin.connect()
  const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] })
  return new Map(offsets!.partitions.map((p) => [p.partition, p.offset]))
}

async function endOffsets(topic: string): Promise<Map<number, string>> {
  const admin = kit.admin()
  await admin.connect()
  return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]))
}

/** Input values per partition, as the pipeline consumed them. */
async function inputOrder(topic: string): Promise<Map<number, string[]>> {
  return valuesByPartition(await readTopic(kit.kafka, topic))
}

function expectOutputsMirrorInputs(outputs: Map<number, string[]>, inputs: Map<number, string[]>): void {
  expect([...outputs.keys()].sort()).toEqual([...inputs.keys()].sort())
  for (const [partition, values] of inputs)
    expect(outputs.get(partition), `partition ${partition}`).toEqual(values.map((v) => `out:${v}`))
}

describe('transactional consume-transform-produce step', () => {
  it('commits each input once: outputs and consumer offsets land together', async () => {
    const topics = await pipelineTopics(kit, 'txn-basic', 3)
    await produceInputs(kit, topics.input, 90)
    const counter = new CommitCounter()
    const logger = memoryLogger()
    let paused = 0
    const { pipeline, started } = startPipeline(
      pipelineKafka(),
      topics,
      { transform: echo(topics.output), maxRecordsPerTransaction: 7, logger },
      {
        onCommitted: (event) => {
          counter.hook(event)
          // A broken metrics hook must not turn a committed transaction into a "failed" one.
          throw new Error('metrics exploded')
        },
        onPaused: () => paused++,
      },
    )
    running.push(pipeline)
    await started
    await counter.reach(90)
    await pipeline.stop()

    expectOutputsMirrorInputs(
      valuesByPartition(await readTopic(kit.kafka, topics.output)),
      await inputOrder(topics.input),
    )
    // The group's committed offset of each partition is its end: nothing left, nothing skipped.
    expect(await committedOffsets(topics.groupId, topics.input)).toEqual(await endOffsets(topics.input))
    // Several transactions per partition (7 records each) were committed, none redone.
    expect(counter.events.length).toBeGreaterThanOrEqual(Math.ceil(90 / 7))
    expect(counter.committed).toBe(90)
    expect(paused).toBe(0)
    expect(logger.lines.some((l) => l.includes('pipeline hook threw'))).toBe(true)
  })

  it('a step killed mid-transaction is invisible to read-committed readers and is redone once after restart', async () => {
    const topics = await pipelineTopics(kit, 'txn-crash', 1)
    await produceInputs(kit, topics.input, 40)

    const child = spawn(
      process.execPath,
      [
        new URL('./fixtures/crash-mid-transaction.ts', import.meta.url).pathname,
        JSON.stringify({
          brokers: inject('kafkaBrokers'),
          ...topics,
          commitsBeforeCrash: 2,
          maxRecordsPerTransaction: 10,
        }),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let childOutput = ''
    child.stdout.on('data', (d: Buffer) => (childOutput += d.toString()))
    child.stderr.on('data', (d: Buffer) => (childOutput += d.toString()))
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, sig) => resolve(sig)),
    )
    expect(signal, childOutput).toBe('SIGKILL')
    expect(childOutput).toContain('CRASHING')

    // Two transactions (20 inputs) committed before the kill; the third sent its outputs and offsets but never committed.
    const restart = new CommitCounter()
    const logger = memoryLogger()
    const { pipeline, started } = startPipeline(
      pipelineKafka(),
      topics,
      { transform: echo(topics.output), logger, instanceId: 'crash-test' },
      { onCommitted: restart.hook },
    )
    running.push(pipeline)
    await started
    await restart.reach(20)
    await pipeline.stop()
    expect(restart.committed, logger.lines.join('\n')).toBe(20)

    const committed = await readTopic(kit.kafka, topics.output)
    expectOutputsMirrorInputs(valuesByPartition(committed), await inputOrder(topics.input))
    // The crashed step's outputs are in the log, but only read-uncommitted sees them.
    const everything = await readTopic(kit.kafka, topics.output, { readUncommitted: true })
    expect(everything.length).toBe(40 + 10)
    expect(await committedOffsets(topics.groupId, topics.input)).toEqual(await endOffsets(topics.input))
  })

  it('a zombie that commits after the new owner fetched its start offset does not cause duplicates', async () => {
    const topics = await pipelineTopics(kit, 'txn-zombie', 1)
    await produceInputs(kit, topics.input, 30)
    // The previous owner of partition 0, still alive: it processed v0..v9 and is about to commit.
    const zombie = kit.producer(
      { transactionalId: `${topics.prefix}-previous-owner`, transactionTimeout: 60_000 },
    )
    await zombie.connect()
    const zombieTx = await zombie.transaction()
    await zombieTx.send({
      topic: topics.output,
      messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `out:v${i}` })),
    })
    await zombieTx.sendOffsets({
      consumerGroupId: topics.groupId,
      topics: [{ topic: topics.input, partitions: [{ partition: 0, offset: '10' }] }],
    })

    // The new owner has fetched offset 0 and holds a batch from v0. The zombie commits
    // before the new owner commits anything: while the new owner reads the committed
    // offset with require_stable (KIP-447), which waits for the zombie's open transaction.
    const kafka = pipelineKafka()
    let zombieCommitted = false
    const commitZombie = async () => {
      zombieCommitted = true
      await zombieTx.commit()
    }
    const onUnstable = loggerActingOn('committed offset unstable', commitZombie)
    const counter = new CommitCounter()
    const { pipeline, started } = startPipeline(
      kafka,
      topics,
      { transform: echo(topics.output), logger: onUnstable },
      { onCommitted: counter.hook },
    )
    running.push(pipeline)
    await started
    await counter.reach(20)
    await pipeline.stop()

    expect(zombieCommitted).toBe(true)
    expect(counter.events[0]?.firstOffset).toBe('10')
    expectOutputsMirrorInputs(
      valuesByPartition(await readTopic(kit.kafka, topics.output)),
      await inputOrder(topics.input),
    )
  })

  it('stop() lets the batch in flight commit what finished; a restart does the rest exactly once', async () => {
    const topics = await pipelineTopics(kit, 'txn-stop', 1)
    await produceInputs(kit, topics.input, 30)
    let releaseRecord5!: () => void
    const gate = new Promise<void>((release) => (releaseRecord5 = release))
    let record5Began!: () => void
    const record5Started = new Promise<void>((began) => (record5Began = began))
    const gateFor5 = async () => {
      record5Began()
      await gate
    }
    const first = new CommitCounter()
    const { pipeline, started } = startPipeline(
      pipelineKafka(),
      topics,
      {
        concurrency: 1,
        transform: async (record) => {
          if (record.value?.toString() === 'v5') await gateFor5()
          return echo(topics.output)(record)
        },
      },
      { onCommitted: first.hook },
    )
    running.push(pipeline)
    await started
    await record5Started
    const stopping = pipeline.stop()
    releaseRecord5()
    await stopping
    // Records v0..v5 finished (v5 was in flight when stop began); the rest were never started.
    expect(first.committed).toBe(6)
    expect((await committedOffsets(topics.groupId, topics.input)).get(0)).toBe('6')

    const second = new CommitCounter()
    const again = startPipeline(
      pipelineKafka(),
      topics,
      { transform: echo(topics.output) },
      { onCommitted: second.hook },
    )
    running.push(again.pipeline)
    await again.started
    await second.reach(24)
    await again.pipeline.stop()
    expectOutputsMirrorInputs(
      valuesByPartition(await readTopic(kit.kafka, topics.output)),
      await inputOrder(topics.input),
    )
  })

  it('stop() while start() is still connecting leaves no member in the group', async () => {
    const topics = await pipelineTopics(kit, 'txn-early-stop', 1)
    const { pipeline, started } = startPipeline(pipelineKafka(), topics, { transform: echo(topics.output) })
    running.push(pipeline)
    await pipeline.stop()
    await started
    expect(pipeline.status().state).toBe('stopped')
    const admin = kit.admin()
    await admin.connect()
    const { groups } = await admin.describeGroups([topics.groupId])
    expect(groups[0]?.members).toEqual([])
  })

  it('a second instance joining mid-stream takes partitions over without loss or duplicates', async () => {
    const topics = await pipelineTopics(kit, 'txn-rebalance', 4)
    await produceInputs(kit, topics.input, 400)
    const counter = new CommitCounter()
    const slowEcho = async (record: { key: Buffer | null; value: Buffer | null }) => {
      await new Promise((r) => setTimeout(r, 2))
      return echo(topics.output)(record)
    }
    const a = startPipeline(
      pipelineKafka(),
      topics,
      { transform: slowEcho, maxRecordsPerTransaction: 10 },
      { onCommitted: counter.hook },
    )
    running.push(a.pipeline)
    await a.started
    await counter.reach(40)
    const b = startPipeline(
      pipelineKafka(),
      topics,
      { transform: slowEcho, maxRecordsPerTransaction: 10 },
      { onCommitted: counter.hook },
    )
    running.push(b.pipeline)
    await b.started
    const bAssigned = await b.pipeline.whenAssigned()
    expect(bAssigned.length).toBeGreaterThan(0)
    await counter.reach(400)
    await Promise.all([a.pipeline.stop(), b.pipeline.stop()])

    expect(counter.committed).toBe(400)
    expectOutputsMirrorInputs(
      valuesByPartition(await readTopic(kit.kafka, topics.output)),
      await inputOrder(topics.input),
    )
  })
})
