import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { AvroSerde, createSchemaRegistry, type PausedEvent, type TransactionalPipeline } from '@tep/kafka'
import { exampleRawCardTransaction } from '@tep/schemas'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { CommitCounter, pipelineKafka, pipelineTopics, startPipeline } from './pipeline-harness.ts'
import { readTopic } from '../support/read-topic.ts'

const kit = createKafkaTestKit()
const running: TransactionalPipeline[] = []
let proxy: Server | undefined
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await kit.disconnectAll()
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()))
})

/** A pass-through to the real registry that answers 503 while `down` is true. */
async function registryProxy(target: string): Promise<{ url: string; setDown(down: boolean): void }> {
  const upstream = new URL(target)
  let down = false
  proxy = createServer((req, res) => {
    if (down) {
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end('{"error_code":50301,"message":"down for the test"}')
      return
    }
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        headers: req.headers,
        path: `${upstream.pathname}${req.url}`,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    forward.on('error', () => res.writeHead(502).end())
    req.pipe(forward)
  })
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve))
  const { port } = proxy.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, setDown: (d) => (down = d) }
}

describe('a schema registry outage', () => {
  it('pauses the pipeline while the writer schema cannot be fetched, then flows on; nothing goes to the DLQ', async () => {
    const topics = await pipelineTopics(kit, 'registry-outage', 1)
    const registryUrl = inject('registryUrl')
    // Written with the real registry, so the schema id exists.
    const writer = new AvroSerde({ registry: createSchemaRegistry({ url: registryUrl }) }).topic(
      topics.input,
      'RawTransaction',
    )
    const producer = kit.producer()
    await producer.connect()
    await producer.send({
      topic: topics.input,
      messages: await Promise.all(
        [0, 1, 2, 3, 4].map(async (i) => ({
          key: `tx-${i}`,
          value: await writer.encode(exampleRawCardTransaction(`tx-${i}`)),
        })),
      ),
    })

    const { url, setDown } = await registryProxy(registryUrl)
    setDown(true)
    // A fresh serde behind the proxy has no cached schema: decoding needs the registry.
    const reader = new AvroSerde({ registry: createSchemaRegistry({ url, retries: 0 }) }).topic(
      topics.input,
      'RawTransaction',
    )
    const paused: PausedEvent[] = []
    const counter = new CommitCounter()
    const { pipeline, started } = startPipeline(
      pipelineKafka(),
      topics,
      {
        retryPolicy: { initialDelayMs: 50, maxDelayMs: 200 },
        transform: async (record) => {
          const event = await reader.decode(record.value)
          return { topic: topics.output, key: record.key, value: Buffer.from(event.transactionId) }
        },
      },
      {
        onCommitted: counter.hook,
        onPaused: (e) => {
          paused.push(e)
          // Heal after the second failed attempt.
          if (paused.length === 2) setDown(false)
        },
      },
    )
    running.push(pipeline)
    await started
    await counter.reach(5)
    await pipeline.stop()

    expect(paused.length).toBeGreaterThanOrEqual(2)
    expect(paused.every((p) => p.code === 'SCHEMA_REGISTRY_UNAVAILABLE' && p.offset === '0')).toBe(true)
    expect((await readTopic(kit.kafka, topics.output)).map((m) => m.value?.toString())).toEqual([
      'tx-0',
      'tx-1',
      'tx-2',
      'tx-3',
      'tx-4',
    ])
    expect(await readTopic(kit.kafka, topics.dlq, { readUncommitted: true })).toEqual([])
  })
})
