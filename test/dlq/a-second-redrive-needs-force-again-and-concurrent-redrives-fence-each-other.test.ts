/**
 * The re-drive guard beyond the first refusal: `--force-again` re-drives a record
 * the ledger names and says so in its audit record; and two re-drives of the same
 * DLQ topic at once cannot both pass the guard, because each claims the writer's
 * fixed transactional id before reading the ledger: the later claim fences the
 * earlier run, whose transaction then fails and leaves nothing behind.
 */
import { claimRedrive, readDlq, redrive, RedriveIncompleteError } from '@tep/dlq'
import { createDlqRecord, createKafka } from '@tep/kafka'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { runDlq } from './dlq-cli.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

/** A raw topic and a DLQ topic holding `n` dead letters of it. */
async function deadLetters(name: string, n: number) {
  const topics = { raw: uniqueName(`${name}.raw`), dlq: uniqueName(`${name}.dlq`), audit: uniqueName(`${name}.audit`) }
  await kit.createTopics([topics.raw, topics.dlq], 1)
  const producer = kit.producer()
  await producer.connect()
  try {
    const messages = Array.from({ length: n }, (_, i) => {
      const r = createDlqRecord(topics.dlq, { topic: topics.raw, partition: 0, offset: String(i), key: Buffer.from(`tx-${i}`), value: Buffer.from(`raw ${i}`) }, { code: 'RAW_INVALID_FIELD', error: new Error('refused'), attempts: 1 })
      return { key: r.key, value: r.value, headers: r.headers as Record<string, string> }
    })
    await producer.send({ topic: topics.dlq, messages })
  } finally {
    await producer.disconnect()
  }
  return topics
}

interface Audit {
  forceAgain: boolean
  note: string
  records: Array<{ dlq: string }>
}
const audits = async (topic: string) => (await readTopic(kit.kafka, topic, { timeoutMs: 20_000 })).map((r) => JSON.parse(r.value!.toString('utf8')) as Audit)

describe('the re-drive guard', () => {
  it('re-drives a record again only with --force-again, and records that it did', async () => {
    const topics = await deadLetters('dlq-force', 2)
    const cli = { dlq: topics.dlq, audit: topics.audit }
    const first = await runDlq(cli, ['redrive', '--ids', '0:0', '--operator', 'op', '--note', 'first'])
    expect(first.code, first.stderr).toBe(0)
    const refused = await runDlq(cli, ['redrive', '--ids', '0:0', '--operator', 'op', '--note', 'again'])
    expect(refused.code).toBe(3)
    // A reason selection skips the re-driven record and re-drives the other.
    const rest = await runDlq(cli, ['redrive', '--reason', 'RAW_INVALID_FIELD', '--operator', 'op', '--note', 'the rest', '--json'])
    expect(rest.code, rest.stderr).toBe(0)
    expect(rest.json()).toMatchObject({ redriven: 1, records: [{ id: '0:1' }] })
    expect(rest.stderr).toContain('1 matching record(s) left out: re-driven before')
    const forced = await runDlq(cli, ['redrive', '--ids', '0:0', '--operator', 'op', '--note', 'lost downstream, again', '--force-again'])
    expect(forced.code, forced.stderr).toBe(0)

    expect((await audits(topics.audit)).map((a) => ({ forceAgain: a.forceAgain, note: a.note, dlq: a.records.map((r) => r.dlq) }))).toEqual([
      { forceAgain: false, note: 'first', dlq: ['0:0'] },
      { forceAgain: false, note: 'the rest', dlq: ['0:1'] },
      { forceAgain: true, note: 'lost downstream, again', dlq: ['0:0'] },
    ])
    const raw = await readTopic(kit.kafka, topics.raw, { timeoutMs: 20_000 })
    expect(raw.map((r) => `${r.key?.toString('utf8')} ${String(r.headers['tep-redrive-from'])}`)).toEqual([
      `tx-0 ${topics.dlq}/0/0`,
      `tx-1 ${topics.dlq}/0/1`,
      `tx-0 ${topics.dlq}/0/0`,
    ])
  })

  it('lets the later of two concurrent re-drives win: the earlier is fenced and writes nothing', async () => {
    const topics = await deadLetters('dlq-fence', 3)
    const kafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: uniqueName('dlq-fence'), logLevel: 'error' })
    const records = await readDlq({ kafka, dlqTopic: topics.dlq, timeoutMs: 20_000 })
    const run = { kafka, dlqTopic: topics.dlq, auditTopic: topics.audit, records, operator: 'op', note: 'n', forceAgain: false, selection: {}, perTransaction: 10 }
    const earlier = await claimRedrive(kafka, topics.dlq, topics.audit)
    const later = await claimRedrive(kafka, topics.dlq, topics.audit)
    try {
      const failed = redrive(earlier, { ...run, redriveId: 'earlier' })
      await expect(failed).rejects.toThrow(RedriveIncompleteError)
      await expect(failed).rejects.toThrow(/stopped after 0 of 3 record\(s\)/)
      await expect(redrive(later, { ...run, redriveId: 'later' })).resolves.toMatchObject({ redriven: 3 })
    } finally {
      await earlier.close()
      await later.close()
    }
    const raw = await readTopic(kit.kafka, topics.raw, { timeoutMs: 20_000 })
    expect(raw.map((r) => String(r.headers['tep-redrive-id']))).toEqual(['later', 'later', 'later'])
    expect((await readTopic(kit.kafka, topics.audit, { timeoutMs: 20_000 })).map((r) => r.key?.toString('utf8'))).toEqual(['later'])
  })
})
