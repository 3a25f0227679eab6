/**
 * `npm run dlq` says what is wrong and writes nothing when it cannot do the whole
 * job: a broker that does not answer (list, redrive), a registry that does not
 * answer (show: an error, not bytes passed off as undecodable), and a selected
 * record whose source topic does not exist (redrive: refused before anything is
 * written, the ledger stays empty).
 */
import { confluentFrame, createDlqRecord } from '@tep/kafka'
import { afterAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { runDlq } from './dlq-cli.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

/** A DLQ topic holding one dead letter of `sourceTopic`, Avro-framed with schema id 1. */
async function dlqWithOneRecord(sourceTopic: string) {
  const topics = { dlq: uniqueName('dlq-errors.dlq'), audit: uniqueName('dlq-errors.audit') }
  await kit.createTopics([topics.dlq], 1)
  const record = createDlqRecord(topics.dlq, { topic: sourceTopic, partition: 0, offset: '7', key: Buffer.from('tx-1'), value: confluentFrame(1, Buffer.from([2, 0])) }, { code: 'AVRO_UNKNOWN_SCHEMA_ID', error: new Error('schema id 1 is unknown'), attempts: 1 })
  const producer = kit.producer()
  await producer.connect()
  try {
    await producer.send({ topic: topics.dlq, messages: [{ key: record.key, value: record.value, headers: record.headers as Record<string, string> }] })
  } finally {
    await producer.disconnect()
  }
  return topics
}

describe('npm run dlq when it cannot do the whole job', () => {
  it('says a broker does not answer, for list and for redrive, and exits 1', async () => {
    const topics = { dlq: 'transactions.dlq.v1', audit: 'transactions.dlq.redrives.v1' }
    for (const args of [['list'], ['redrive', '--all', '--operator', 'op', '--note', 'n']]) {
      const r = await runDlq(topics, [...args, '--brokers', '127.0.0.1:1', '--timeout', '3'])
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr).toContain('cannot reach Kafka at 127.0.0.1:1')
      expect(r.stderr).toContain('nothing was read or written')
    }
  })

  it('says the registry does not answer instead of showing the value as undecodable', async () => {
    const topics = await dlqWithOneRecord(uniqueName('dlq-errors.raw'))
    const r = await runDlq(topics, ['show', '0:0', '--registry', 'http://127.0.0.1:1/apis/ccompat/v7', '--timeout', '10'])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toContain('cannot decode 0:0: the schema registry at http://127.0.0.1:1/apis/ccompat/v7 is unreachable')
    expect(r.stdout).toBe('')
  })

  it('refuses to re-drive to a source topic that does not exist, before writing anything', async () => {
    const missing = uniqueName('dlq-errors.gone')
    const topics = await dlqWithOneRecord(missing)
    const r = await runDlq(topics, ['redrive', '--reason', 'AVRO_UNKNOWN_SCHEMA_ID', '--operator', 'op', '--note', 'n'])
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr).toContain(`the source topic(s) ${missing} of the selected records do not exist; nothing was re-driven`)
    expect(await readTopic(kit.kafka, topics.audit, { timeoutMs: 20_000 })).toEqual([])
    const admin = kit.admin()
    await admin.connect()
    try {
      expect(await admin.listTopics()).not.toContain(missing)
    } finally {
      await admin.disconnect()
    }
  })
})
