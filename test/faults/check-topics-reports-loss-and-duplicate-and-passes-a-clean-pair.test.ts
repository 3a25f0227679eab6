/**
 * The independent checker (`npm run check-topics`) on a real broker and
 * registry: a topic pair written with one raw record lost and one enriched
 * twice (what a pipeline that commits offsets outside its transaction leaves
 * after a crash) is reported as such and exits 1; a clean pair, including an
 * aborted transaction that wrote a second outcome, exits 0.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { AvroSerde, createSchemaRegistry } from '@tep/kafka'
import { exampleEnrichedTransaction } from '@tep/schemas'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'

const run = promisify(execFile)
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

interface Summary {
  passed: boolean
  lost: number
  duplicated: number
  dlqFromFaults: number
  unexpected: number
  undecodable: number
  raw: { records: number }
  enriched: { records: number; byStatus: Record<string, number> }
  samples: { lost: string[]; duplicated: string[] }
}

async function checkTopics(topics: { raw: string; enriched: string; dlq: string }): Promise<{ code: number; summary: Summary }> {
  const args = ['tools/check-topics/src/main.ts', '--brokers', inject('kafkaBrokers').join(','), '--registry', inject('registryUrl'), '--raw', topics.raw, '--enriched', topics.enriched, '--dlq', topics.dlq]
  try {
    const { stdout } = await run(process.execPath, args, { cwd: repoRoot })
    return { code: 0, summary: JSON.parse(stdout) as Summary }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    if (e.code !== 1) throw new Error(`check-topics exited ${e.code}: ${e.stderr}`, { cause: err })
    return { code: 1, summary: JSON.parse(e.stdout ?? '') as Summary }
  }
}

async function topicTrio(name: string) {
  const topics = { raw: uniqueName(`${name}-raw`), enriched: uniqueName(`${name}-enriched`), dlq: uniqueName(`${name}-dlq`) }
  await kit.createTopics([topics.raw, topics.enriched, topics.dlq], 3)
  const enrichedCodec = new AvroSerde({ registry: createSchemaRegistry({ url: inject('registryUrl') }) }).topic(topics.enriched, 'EnrichedTransaction')
  const enriched = async (id: string) => ({ key: id, value: await enrichedCodec.encode({ ...exampleEnrichedTransaction(), transactionId: id }) })
  return { topics, enriched }
}

const ids = ['tx-a', 'tx-b', 'tx-c', 'tx-d']
const rawMessages = ids.map((id) => ({ key: id, value: Buffer.from(`raw ${id}`) }))
const dlqOfD = { key: 'tx-d', value: Buffer.from('raw tx-d'), headers: { 'dlq.error.code': 'AVRO_BAD_MAGIC_BYTE' } }

describe('npm run check-topics', () => {
  it('reports a topic pair with one loss and one duplicate and exits 1', async () => {
    const { topics, enriched } = await topicTrio('check-broken')
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic: topics.raw, messages: rawMessages })
    // tx-b never got an outcome; tx-a got two (committed twice).
    await producer.send({ topic: topics.enriched, messages: [await enriched('tx-a'), await enriched('tx-a'), await enriched('tx-c')] })
    await producer.send({ topic: topics.dlq, messages: [dlqOfD] })
    const { code, summary } = await checkTopics(topics)
    expect(code).toBe(1)
    expect(summary).toMatchObject({ passed: false, lost: 1, duplicated: 1, dlqFromFaults: 0, unexpected: 0, undecodable: 0 })
    expect(summary.samples).toMatchObject({ lost: ['tx-b'], duplicated: ['tx-a'] })
  })

  it('passes a clean pair and does not see the outcome of an aborted transaction', async () => {
    const { topics, enriched } = await topicTrio('check-clean')
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic: topics.raw, messages: rawMessages })
    const txProducer = kit.producer({ transactionalId: uniqueName('check-tx'), idempotent: true, maxInFlightRequests: 1 })
    await txProducer.connect()
    const aborted = await txProducer.transaction()
    await aborted.send({ topic: topics.enriched, messages: [await enriched('tx-a'), await enriched('tx-b')] })
    await aborted.abort()
    const committed = await txProducer.transaction()
    await committed.send({ topic: topics.enriched, messages: await Promise.all(ids.slice(0, 3).map(enriched)) })
    await committed.send({ topic: topics.dlq, messages: [dlqOfD] })
    await committed.commit()
    const { code, summary } = await checkTopics(topics)
    expect(summary).toMatchObject({ passed: true, lost: 0, duplicated: 0, raw: { records: 4 }, enriched: { records: 3, byStatus: { MATCHED: 3 } } })
    expect(code).toBe(0)
  })

  it('counts a DLQ record caused by an API outage as a failure', async () => {
    const { topics, enriched } = await topicTrio('check-dlq-fault')
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic: topics.raw, messages: rawMessages })
    await producer.send({ topic: topics.enriched, messages: await Promise.all(ids.slice(0, 3).map(enriched)) })
    await producer.send({ topic: topics.dlq, messages: [{ ...dlqOfD, headers: { 'dlq.error.code': 'ENRICHMENT_SERVER_ERROR' } }] })
    const { code, summary } = await checkTopics(topics)
    expect(code).toBe(1)
    expect(summary).toMatchObject({ passed: false, lost: 0, duplicated: 0, dlqFromFaults: 1 })
  })
})
