import { afterAll, describe, expect, it } from 'vitest'
import { PipelineError } from '@tep/errors'
import { readDlqHeaders, type TransactionalPipeline } from '@tep/kafka'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { CommitCounter, pipelineKafka, pipelineTopics, produceInputs, startPipeline } from './pipeline-harness.ts'

const kit = createKafkaTestKit()
const running: TransactionalPipeline[] = []
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await kit.disconnectAll()
})

/**
 * A transform may answer without a promise (an identity, a lookup in memory):
 * the loop then makes none per record. Its results, and what it throws at
 * once, must count exactly as an async transform's would: outputs committed
 * in input order, a record failure dead-lettered, a systemic failure pausing
 * the partition and redoing it, nothing lost or doubled.
 */
describe('a synchronous transform', () => {
  it('commits outputs in order, dead-letters what it throws as a record failure, and redoes after what it throws as systemic', async () => {
    const topics = await pipelineTopics(kit, 'sync-transform', 2)
    const values = await produceInputs(kit, topics.input, 400)
    const counter = new CommitCounter()
    const paused: number[] = []
    let systemicLeft = 2
    const { pipeline, started } = startPipeline(
      pipelineKafka(),
      topics,
      {
        transform: (record) => {
          const value = record.value!.toString()
          if (value === 'v77') throw new PipelineError('v77 can never be transformed', { code: 'TEST_POISON', retriable: false })
          if (value === 'v150' && systemicLeft-- > 0) throw new PipelineError('downstream unavailable', { code: 'TEST_OUTAGE', retriable: true })
          return value === 'v200' ? undefined : { topic: topics.output, key: record.key, value: Buffer.from(`out-${value}`) }
        },
        retryPolicy: { initialDelayMs: 20, maxDelayMs: 50 },
      },
      { onCommitted: counter.hook, onPaused: (e) => paused.push(e.attempt) },
    )
    running.push(pipeline)
    await started
    await counter.reach(values.length)
    await pipeline.stop()

    const outputs = await readTopic(kit.kafka, topics.output)
    const expected = values.filter((v) => v !== 'v77' && v !== 'v200').map((v) => `out-${v}`)
    expect(outputs.map((m) => m.value?.toString()).sort()).toEqual([...expected].sort())
    // Per key's partition, in input order.
    const byPartition = new Map<number, string[]>()
    for (const m of outputs) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m.value!.toString()])
    for (const list of byPartition.values()) expect(list).toEqual([...list].sort((a, b) => Number(a.slice(5)) - Number(b.slice(5))))
    const dlq = await readTopic(kit.kafka, topics.dlq)
    expect(dlq.map((m) => m.value?.toString())).toEqual(['v77'])
    expect(readDlqHeaders(dlq[0]!.headers).errorCode).toBe('TEST_POISON')
    expect(paused).toEqual([1, 2])
  })
})
