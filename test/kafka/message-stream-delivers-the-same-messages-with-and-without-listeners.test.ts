/**
 * scripts/patch-platformatic-kafka.mjs (fourth patch) stops @platformatic/kafka's
 * message stream from building, per fetched record, a diagnostic context and a
 * copy of the record for the deserializers when nothing uses them. What a
 * consumer gets must not change: the same messages (key, value, headers,
 * offsets, timestamps, metadata) with and without a subscriber on the
 * 'plt:kafka:consumer:receives' channel; a subscriber still sees one context
 * per record with the raw record and the message; a custom deserializer still
 * gets the record with its topic and partition.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { Consumer, Producer, type Message } from '@platformatic/kafka'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'

const kit = createKafkaTestKit()
const brokers = inject('kafkaBrokers')
const closers: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const close of closers) await close().catch(() => {})
  await kit.disconnectAll()
})

const COUNT = 40

async function produce(topic: string): Promise<void> {
  const producer = new Producer({ clientId: uniqueName('stream-p'), bootstrapBrokers: brokers, idempotent: true, acks: -1 })
  closers.push(() => producer.close())
  await producer.send({
    messages: Array.from({ length: COUNT }, (_, i) => ({
      topic,
      partition: i % 2,
      key: Buffer.from(`key-${i}`),
      value: i % 7 === 3 ? undefined : Buffer.from(`value-${i}`),
      timestamp: 1_790_000_000_000n + BigInt(i),
      ...(i % 3 === 0 ? { headers: new Map([[Buffer.from('h'), Buffer.from(`header-${i}`)]]) } : {}),
    })),
  })
}

/** Every message of `topic` as the stream delivers it, in a comparable form. */
async function consumeAll(topic: string, deserializers?: { value: (data: Buffer | undefined, headers: unknown, message: unknown) => unknown }) {
  const consumer = new Consumer({ clientId: uniqueName('stream-c'), groupId: uniqueName('stream-g'), bootstrapBrokers: brokers, ...(deserializers === undefined ? {} : { deserializers }) })
  closers.push(() => consumer.close(true))
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 100 })
  const seen: Message[] = []
  for await (const message of stream) {
    seen.push(message as Message)
    if (seen.length === COUNT) break
  }
  await stream.close()
  return seen
    .map((m) => ({
      partition: m.partition,
      offset: m.offset,
      timestamp: m.timestamp,
      key: m.key?.toString(),
      value: Buffer.isBuffer(m.value) ? m.value.toString() : (m.value as unknown),
      headers: [...m.headers].map(([k, v]) => [k.toString(), v?.toString()]),
      groupId: (m.metadata as { consumer?: { groupId?: string } }).consumer?.groupId === undefined ? 'missing' : 'set',
      commit: typeof m.commit,
    }))
    .sort((a, b) => a.partition - b.partition || Number(a.offset - b.offset))
}

describe("@platformatic/kafka's message stream, patched", () => {
  it('is patched (the postinstall step took)', () => {
    const entry = createRequire(import.meta.url).resolve('@platformatic/kafka')
    let dist = path.dirname(entry)
    while (path.basename(dist) !== 'dist') dist = path.dirname(dist)
    expect(readFileSync(path.join(dist, 'clients', 'consumer', 'messages-stream.js'), 'utf8')).toContain('tep-patch: no per-record context or copy when unused')
  })

  it('delivers the same messages with and without a listener, and a listener gets a context per record', async () => {
    const topic = uniqueName('message-stream')
    await kit.createTopics([topic], 2)
    await produce(topic)

    const quiet = await consumeAll(topic)
    expect(quiet).toHaveLength(COUNT)
    expect(quiet.filter((m) => m.headers.length === 1)).toHaveLength(14)
    expect(quiet.find((m) => m.key === 'key-3')?.value).toBeUndefined()
    expect(quiet.every((m) => m.groupId === 'set' && m.commit === 'function')).toBe(true)

    const contexts: Array<{ raw?: { key?: Buffer }; result?: Message }> = []
    const onStart = (context: unknown) => contexts.push(context as (typeof contexts)[number])
    subscribe('tracing:plt:kafka:consumer:receives:start', onStart)
    let traced: Awaited<ReturnType<typeof consumeAll>>
    try {
      traced = await consumeAll(topic)
    } finally {
      unsubscribe('tracing:plt:kafka:consumer:receives:start', onStart)
    }
    expect(traced).toEqual(quiet)
    expect(contexts).toHaveLength(COUNT)
    // The context is the one the message is published on: raw record before, message after.
    expect(contexts.every((c) => c.raw?.key !== undefined && c.result?.key?.equals(c.raw.key!))).toBe(true)
  })

  it('gives a custom deserializer the record with its topic and partition', async () => {
    const topic = uniqueName('message-stream-deser')
    await kit.createTopics([topic], 2)
    await produce(topic)
    const places = new Set<string>()
    const got = await consumeAll(topic, {
      value: (data, _headers, message) => {
        const m = message as { topic?: string; partition?: number }
        places.add(`${m.topic}:${m.partition}`)
        return data === undefined ? undefined : `deserialized ${data.toString()}`
      },
    })
    expect(got.find((m) => m.key === 'key-4')?.value).toBe('deserialized value-4')
    expect([...places].sort()).toEqual([`${topic}:0`, `${topic}:1`])
  })
})
