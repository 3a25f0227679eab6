/**
 * The DLQ tool on a real broker, registry, ingest and enrichment simulator, with a
 * dead letter a fix really cures: a partner producer's schema version is lost from
 * the registry (its subject deleted, as a registry restored from an older backup
 * would have it), so the ingest dead-letters its records as AVRO_UNKNOWN_SCHEMA_ID
 * while the other records flow. `list` groups them, `show` shows one (bytes while
 * the schema is unknown, decoded once it is back), `redrive --dry-run` writes
 * nothing; the schema is restored (re-registered: the registry gives the same
 * content the same id), `redrive` sends them back, the running ingest enriches
 * each exactly once, a second `redrive` is refused, and check-topics accounts for
 * every raw event: 0 lost, 0 duplicated.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { confluentFrame, readDlqHeaders, registerSubjectSchema } from '@tep/kafka'
import { maskPans } from '@tep/observability'
import { avroSchema, type RawTransaction } from '@tep/schemas'
import { describe, expect, inject, it } from 'vitest'
import { consumedToEnd, createIngestTopics, fetchSamples, rawFromSample, readOutcomes, registryForTests, useIngestWorld } from '../ingest/ingest-harness.ts'
import { uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'
import { runDlq } from './dlq-cli.ts'

const run = promisify(execFile)
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const world = useIngestWorld(37)
const { kit, serde } = world

const registryUrl = () => inject('registryUrl').replace(/\/+$/, '')

/** Deletes a subject for good (soft, then permanent), as a registry restored from an older backup would not have it. */
async function deleteSubject(subject: string): Promise<void> {
  for (const suffix of ['', '?permanent=true']) {
    const res = await fetch(`${registryUrl()}/subjects/${encodeURIComponent(subject)}${suffix}`, { method: 'DELETE' })
    if (!res.ok) throw new Error(`DELETE subject ${subject}${suffix} answered ${res.status}: ${await res.text()}`)
  }
}

interface Group {
  reason: string
  sourceTopic: string
  count: number
  redriven: number
}

describe('npm run dlq on dead letters a schema restore makes processable', () => {
  it('lists, shows, dry-runs, re-drives each exactly once, refuses a second re-drive, and check-topics finds nothing lost or duplicated', async () => {
    const topics = await createIngestTopics(kit, 'dlq-redrive', 3)
    const cli = { dlq: topics.dlq, audit: uniqueName('dlq-redrive.audit') }

    // The partner's schema version: RawTransaction with its own doc, so the registry stores it as its own content.
    const partnerSubject = `${uniqueName('dlq-partner')}-value`
    const raw = avroSchema('RawTransaction')
    const partnerSchema = { ...(raw.schema as Record<string, unknown>), doc: `RawTransaction as partner ${partnerSubject} writes it` }
    // The partner registers through its own client: a registry client caches what it registered, and the ingest must ask the registry.
    const partnerId = await registerSubjectSchema(registryForTests(), partnerSubject, partnerSchema as never)

    const [cards, transfers] = await Promise.all([fetchSamples(world.sim, 'card', 'found', 12, 37), fetchSamples(world.sim, 'transfer', 'found', 6, 37)])
    const goods: RawTransaction[] = [...cards.slice(0, 4), ...transfers.slice(0, 2)].map((s, i) => rawFromSample(s, `dlq-good-${i}`))
    // Records the DLQ keeps byte for byte (nothing in them looks like a card number)...
    const partner: RawTransaction[] = [...cards.slice(4), ...transfers.slice(2)]
      .map((s, i) => rawFromSample(s, `dlq-partner-${i}`))
      .filter((p) => maskPans(raw.type.toBuffer(p)).masked === 0)
      .slice(0, 5)
    expect(partner.length).toBe(5)
    // ... and one whose description carries a card number: the DLQ masks it, so its bytes are no longer the original.
    const panCard = rawFromSample(cards[4]!, 'dlq-partner-with-pan')
    const withPan: RawTransaction = { ...panCard, card: { ...panCard.card!, description: 'card 4111111111111111 declined' } }
    const partnerIds = partner.map((p) => p.transactionId)
    const deadIds = [...partnerIds, withPan.transactionId]

    // Lost from the registry before the partner's records arrive.
    await deleteSubject(partnerSubject)
    expect((await fetch(`${registryUrl()}/schemas/ids/${partnerId}`)).status).toBe(404)

    const codec = serde.topic(topics.input, 'RawTransaction')
    const producer = kit.producer()
    await producer.connect()
    try {
      const messages = []
      const partnerRecords = [...partner, withPan]
      for (let i = 0; i < goods.length; i++) {
        messages.push({ key: goods[i]!.transactionId, value: await codec.encode(goods[i]!) })
        const p = partnerRecords[i]
        if (p !== undefined) messages.push({ key: p.transactionId, value: confluentFrame(partnerId, raw.type.toBuffer(p)) })
      }
      await producer.send({ topic: topics.input, messages })
    } finally {
      await producer.disconnect()
    }

    // A registry client of its own, as a deployed ingest has: nothing cached from the producing side.
    const ingest = await world.startIngest(topics, { schemaRegistry: registryForTests() })
    const admin = kit.admin()
    await admin.connect()
    await waitFor('the ingest to consume every raw record', () => consumedToEnd(admin, topics.groupId, topics.input), { timeoutMs: 60_000 })

    // (a) the partner's records are dead letters with the reason, the others enriched.
    const dead = await readTopic(kit.kafka, topics.dlq, { timeoutMs: 30_000 })
    expect(dead.map((r) => r.key?.toString('utf8')).sort()).toEqual([...deadIds].sort())
    for (const r of dead) expect(readDlqHeaders(r.headers).errorCode).toBe('AVRO_UNKNOWN_SCHEMA_ID')

    // (b) list groups them by reason and source topic; show shows one, its value as bytes while the schema is unknown.
    const list = await runDlq(cli, ['list', '--json', '--bucket', '1d'])
    expect(list.code, list.stderr).toBe(0)
    const groups = list.json<{ groups: Group[] }>().groups
    expect(groups.map(({ reason, sourceTopic, count, redriven }) => ({ reason, sourceTopic, count, redriven }))).toEqual([
      { reason: 'AVRO_UNKNOWN_SCHEMA_ID', sourceTopic: topics.input, count: deadIds.length, redriven: 0 },
    ])
    const clean = dead.filter((d) => d.key?.toString('utf8') !== withPan.transactionId)
    const firstId = `${clean[0]!.partition}:${clean[0]!.offset}`
    const before = await runDlq(cli, ['show', firstId, '--json'])
    expect(before.code, before.stderr).toBe(0)
    expect(before.json()).toMatchObject({
      id: firstId,
      key: clean[0]!.key?.toString('utf8'),
      headers: { 'dlq.error.code': 'AVRO_UNKNOWN_SCHEMA_ID', 'dlq.source.topic': topics.input },
      value: { encoding: 'hex', schemaId: partnerId, undecoded: expect.stringMatching(/unknown/) },
    })
    const table = await runDlq(cli, ['list'])
    expect(table.stdout).toMatch(new RegExp(`AVRO_UNKNOWN_SCHEMA_ID +${topics.input.replace(/\./g, '\\.')} +\\S+ +${deadIds.length} +0 `))

    // An unknown reason is named as such, with the reasons present.
    const typo = await runDlq(cli, ['redrive', '--reason', 'AVRO_UNKNOWN_SCHEMA', '--dry-run'])
    expect(typo.code).toBe(4)
    expect(typo.stderr).toContain(`no DLQ record has the reason AVRO_UNKNOWN_SCHEMA; reasons on the DLQ: AVRO_UNKNOWN_SCHEMA_ID (${deadIds.length})`)

    // (c) a dry run lists them and writes nothing.
    const rawEnds = async () => (await admin.fetchTopicOffsets(topics.input)).map((p) => p.high)
    const endsBefore = await rawEnds()
    const dry = await runDlq(cli, ['redrive', '--reason', 'AVRO_UNKNOWN_SCHEMA_ID', '--dry-run', '--json'])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.json()).toMatchObject({ dryRun: true, wouldRedrive: partner.length, matched: deadIds.length, masked: 1 })
    expect(dry.stderr).toContain('1 matching record(s) left out: card numbers were masked in them when they were dead-lettered')
    expect(await rawEnds()).toEqual(endsBefore)
    expect((await admin.listTopics()).includes(cli.audit)).toBe(false)

    // The fix: the schema is restored. The registry gives the same content its id back.
    expect(await registerSubjectSchema(registryForTests(), partnerSubject, partnerSchema as never)).toBe(partnerId)
    const after = await runDlq(cli, ['show', firstId, '--json'])
    expect(after.json()).toMatchObject({ value: { encoding: 'avro', schemaId: partnerId, content: { transactionId: clean[0]!.key?.toString('utf8') } } })

    // (d) redrive: back to the raw topic with the audit record in the same transaction; one enriched record each.
    const beforeRedrive = new Date().toISOString()
    const redrive = await runDlq(cli, ['redrive', '--reason', 'AVRO_UNKNOWN_SCHEMA_ID', '--operator', 'test-operator', '--note', 'partner schema restored', '--json', '--per-transaction', '2'])
    expect(redrive.code, redrive.stderr).toBe(0)
    const result = redrive.json<{ redriveId: string; redriven: number; transactions: number }>()
    expect(result).toMatchObject({ redriven: partner.length, transactions: Math.ceil(partner.length / 2) })
    expect(redrive.stderr).toMatch(new RegExp(`re-drove ${partner.length} of ${partner.length} record\\(s\\)`))
    // The re-driven records end in a commit marker, which no consumer offset points past: wait for their outcomes instead.
    await waitFor(
      'an outcome of every re-driven record',
      async () => {
        const o = await readOutcomes(kit.kafka, serde, topics)
        return partnerIds.every((id) => o.enriched.has(id) || (o.dlq.get(id)?.count ?? 0) > 1)
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    )
    // Whatever the ingest still had in flight commits or aborts before the outcomes are counted.
    await ingest.stop()

    const outcomes = await readOutcomes(kit.kafka, serde, topics)
    for (const id of partnerIds) {
      expect(outcomes.enriched.get(id)?.length, id).toBe(1)
      expect(outcomes.enriched.get(id)?.[0]?.status, id).toBe('MATCHED')
      expect(outcomes.dlq.get(id)?.count, id).toBe(1)
    }
    for (const g of goods) expect(outcomes.enriched.get(g.transactionId)?.length, g.transactionId).toBe(1)
    // The masked one stays a dead letter, not re-driven: its one outcome.
    expect(outcomes.enriched.has(withPan.transactionId)).toBe(false)
    expect(outcomes.dlq.get(withPan.transactionId)?.count).toBe(1)
    const redriven = (await readTopic(kit.kafka, topics.input, { timeoutMs: 30_000 })).filter((r) => r.headers['tep-redrive-id'] !== undefined)
    expect(redriven.map((r) => String(r.headers['tep-redrive-from'])).sort()).toEqual(clean.map((d) => `${topics.dlq}/${d.partition}/${d.offset}`).sort())
    expect(new Set(redriven.map((r) => String(r.headers['tep-redrive-id'])))).toEqual(new Set([result.redriveId]))
    const audits = (await readTopic(kit.kafka, cli.audit, { timeoutMs: 30_000 })).map((r) => JSON.parse(r.value!.toString('utf8')) as { operator: string; note: string; redriveId: string; records: Array<{ dlq: string }> })
    expect(audits.every((a) => a.operator === 'test-operator' && a.note === 'partner schema restored' && a.redriveId === result.redriveId)).toBe(true)
    expect(audits.flatMap((a) => a.records.map((r) => r.dlq)).sort()).toEqual(clean.map((d) => `${d.partition}:${d.offset}`).sort())

    // (e) a second re-drive of the same records is refused, by reason and by id; list counts them as re-driven.
    const again = await runDlq(cli, ['redrive', '--reason', 'AVRO_UNKNOWN_SCHEMA_ID', '--operator', 'test-operator', '--note', 'again'])
    expect(again.code).toBe(3)
    expect(again.stderr).toMatch(new RegExp(`refused: ${partner.length} selected DLQ record\\(s\\) were re-driven before: .*redrive ${result.redriveId} by test-operator`))
    const byId = await runDlq(cli, ['redrive', '--ids', firstId, '--operator', 'test-operator', '--note', 'again'])
    expect(byId.code).toBe(3)
    expect(byId.stderr).toContain('--force-again')
    expect((await runDlq(cli, ['list', '--json'])).json<{ groups: Group[] }>().groups.reduce((n, g) => n + g.redriven, 0)).toBe(partner.length)
    expect((await readTopic(kit.kafka, cli.audit, { timeoutMs: 30_000 })).length).toBe(audits.length)

    // check-topics: every raw event accounted for, a re-driven one as one event with one outcome, also when the
    // window holds only its first occurrence (where counting raw records per key would find a duplicate).
    const checkTopics = async (...window: string[]): Promise<unknown> => {
      const args = ['tools/check-topics/src/main.ts', '--brokers', inject('kafkaBrokers').join(','), '--registry', inject('registryUrl'), '--raw', topics.input, '--enriched', topics.enriched, '--dlq', topics.dlq, ...window]
      try {
        return JSON.parse((await run(process.execPath, args, { cwd: repoRoot })).stdout)
      } catch (err) {
        // Exit 1 is a finding: its summary is what the assertion shows.
        const e = err as { code?: number; stdout?: string }
        if (e.code === 1 && e.stdout) return JSON.parse(e.stdout)
        throw err
      }
    }
    const clean0 = { passed: true, lost: 0, duplicated: 0, dlqFromFaults: 0, unexpected: 0 }
    expect(await checkTopics('--to', beforeRedrive)).toMatchObject({ ...clean0, raw: { inWindow: goods.length + deadIds.length } })
    expect(await checkTopics()).toMatchObject({ ...clean0, raw: { records: goods.length + deadIds.length + partner.length }, redriven: { records: partner.length, superseded: partner.length, untraced: 0 } })
    await admin.disconnect()
  })
})
