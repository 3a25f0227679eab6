/**
 * N mixed raw events (cards and transfers; found, not found and rejected by the
 * API; plus records that cannot be enriched at all) give exactly N results under
 * read-committed: one enriched record or one DLQ record per transaction id, with
 * the status the simulator says each input must get. Run in both lookup modes.
 */
import { createMetricsRegistry } from '@tep/observability'
import type { RawTransaction } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { readTopic } from '../kafka/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  encodeUnchecked,
  fetchSamples,
  produceRaw,
  rawFromSample,
  readOutcomes,
  representable,
  useIngestWorld,
  type SimSample,
} from './ingest-harness.ts'

const world = useIngestWorld(11)
const { kit, serde } = world

type Expectation =
  | { kind: 'MATCHED'; shopUid: string; merchantUid: string; handle: string }
  | { kind: 'NOT_FOUND' }
  | { kind: 'REJECTED'; code: string }
  | { kind: 'DLQ'; code: string }

async function mixedSamples(seed: number): Promise<SimSample[]> {
  const batches = await Promise.all([
    fetchSamples(world.sim, 'card', 'found', 30, seed),
    fetchSamples(world.sim, 'card', 'notFound', 8, seed),
    fetchSamples(world.sim, 'card', 'invalid', 20, seed),
    fetchSamples(world.sim, 'transfer', 'found', 12, seed),
    fetchSamples(world.sim, 'transfer', 'notFound', 6, seed),
    fetchSamples(world.sim, 'transfer', 'invalid', 20, seed),
  ])
  return batches.flat().filter(representable)
}

describe.each(['batch', 'single'] as const)('transaction-ingest in %s lookup mode', (mode) => {
  it('gives exactly one enriched-or-DLQ record per raw event, with the status the API decides', async () => {
    const topics = await createIngestTopics(kit, `ingest-mixed-${mode}`)
    const samples = await mixedSamples(mode === 'batch' ? 1 : 2)
    const expected = new Map<string, Expectation>()
    const events: RawTransaction[] = []
    samples.forEach((sample, i) => {
      const id = `${mode}-${i}-${sample.kind}-${sample.expected.outcome}`
      events.push(rawFromSample(sample, id))
      const e = sample.expected
      expected.set(
        id,
        e.outcome === 'found'
          ? { kind: 'MATCHED', shopUid: e.shopUid!, merchantUid: e.merchantUid!, handle: e.handle! }
          : e.outcome === 'notFound'
            ? { kind: 'NOT_FOUND' }
            : { kind: 'REJECTED', code: e.code! },
      )
    })
    // Every category must be present, or the test would prove less than it says.
    for (const kind of ['MATCHED', 'NOT_FOUND', 'REJECTED'] as const) {
      expect([...expected.values()].filter((e) => e.kind === kind).length, kind).toBeGreaterThan(3)
    }

    // Schemes the API has no variant of their own for are looked up too ("The client calls the
    // service for every transaction or transfer"), through the variant that fits what they carry.
    const matchedAs = (sample: SimSample): Expectation => ({
      kind: 'MATCHED',
      shopUid: sample.expected.shopUid!,
      merchantUid: sample.expected.merchantUid!,
      handle: sample.expected.handle!,
    })
    const foreign = samples.find(
      (s) =>
        s.operation.endsWith('/sepa') && s.expected.outcome === 'found' && !/^(CZ|GB)/i.test(s.input.iban ?? ''),
    )
    const domestic = samples.find((s) => s.operation.endsWith('/certis') && s.expected.outcome === 'found')
    expect(foreign, 'a found SEPA sample with a foreign IBAN').toBeDefined()
    expect(domestic, 'a found CERTIS sample').toBeDefined()
    const swift = rawFromSample(foreign!, `${mode}-swift`)
    swift.transfer = { ...swift.transfer!, scheme: 'SWIFT' }
    const internal = rawFromSample(domestic!, `${mode}-internal`)
    internal.transfer = { ...internal.transfer!, scheme: 'INTERNAL' }
    // Nothing to look it up by: still sent, and the API's 400 is its per-record answer.
    const other = rawFromSample(foreign!, `${mode}-other`)
    other.transfer = { ...other.transfer!, scheme: 'OTHER', counterpartyIban: null, counterpartyBic: null }
    events.push(swift, internal, other)
    expected.set(swift.transactionId, matchedAs(foreign!))
    expected.set(internal.transactionId, matchedAs(domestic!))
    expected.set(other.transactionId, { kind: 'REJECTED', code: 'MISSING_PARAMETER' })

    // Records that can never be enriched: DLQ with a specific code each.
    const card = events.find((e) => e.card !== null)!
    const transfer = events.find((e) => e.transfer !== null)!
    const broken: { key: string; value: Buffer }[] = [
      { key: `${mode}-garbage-1`, value: Buffer.from('not avro at all') },
      { key: `${mode}-garbage-2`, value: Buffer.from([0, 0, 0]) },
      {
        key: `${mode}-both`,
        value: await encodeUnchecked(serde, topics.input, {
          ...card,
          transactionId: `${mode}-both`,
          transfer: transfer.transfer,
        }),
      },
      {
        key: `${mode}-pan`,
        value: await encodeUnchecked(serde, topics.input, {
          ...card,
          transactionId: `${mode}-pan`,
          card: { ...card.card!, cardBin: '4111111111111111' },
        }),
      },
    ]
    expected.set(`${mode}-garbage-1`, { kind: 'DLQ', code: 'AVRO_BAD_MAGIC_BYTE' })
    expected.set(`${mode}-garbage-2`, { kind: 'DLQ', code: 'AVRO_EMPTY_VALUE' })
    expected.set(`${mode}-both`, { kind: 'DLQ', code: 'RAW_CARD_AND_TRANSFER' })
    expected.set(`${mode}-pan`, { kind: 'DLQ', code: 'RAW_INVALID_FIELD' })

    await produceRaw(kit, serde, topics.input, events, broken)
    // Each input exactly once, or an input duplicated by a retried produce request
    // would read below as the pipeline duplicating its output.
    const inputKeys = (await readTopic(kit.kafka, topics.input)).map(
      (r) => r.key?.toString('utf8') ?? '<null>',
    )
    expect(inputKeys.length - new Set(inputKeys).size, 'duplicated raw input records').toBe(0)
    expect(inputKeys.length).toBe(expected.size)
    const statsBefore = (await (await fetch(`${world.sim.url}/__admin/stats`)).json()) as {
      lookups: number
      requests: { byOperation: Record<string, number> }
    }

    const metricsRegistry = createMetricsRegistry({ service: `ingest-${mode}`, defaultMetrics: false })
    const ingest = await world.startIngest(topics, {
      lookupMode: mode,
      // Batch mode keeps the default (auto: complete lookups while the table is cold);
      // single mode exercises the table-and-API path.
      ...(mode === 'single' ? { completeLookups: 'never' as const } : {}),
      batchLingerMs: 5,
      metricsRegistry,
    })
    expect(ingest.readiness.snapshot().checks.table?.ready).toBe(true)

    const admin = kit.admin()
    await admin.connect()
    await waitFor(
      'ingest to consume every raw record',
      () => consumedToEnd(admin, topics.groupId, topics.input),
      { timeoutMs: 60_000 },
    )
    await ingest.stop()

    const outcomes = await readOutcomes(kit.kafka, serde, topics)
    expect(outcomes.duplicatePositions).toEqual({})
    expect(outcomes.total).toBe(expected.size)
    for (const [id, want] of expected) {
      if (want.kind === 'DLQ') {
        expect(outcomes.dlq.get(id)?.code, id).toBe(want.code)
        continue
      }
      const got = outcomes.enriched.get(id)?.[0]
      expect(got, `${id} has no enriched record`).toBeDefined()
      expect(got!.status, id).toBe(want.kind)
      if (want.kind === 'MATCHED') {
        expect(got).toMatchObject({
          shopUid: want.shopUid,
          merchantUid: want.merchantUid,
          handle: want.handle,
          rejectReason: null,
        })
        expect(got!.shop?.uid).toBe(want.shopUid)
        expect(got!.merchant?.uid).toBe(want.merchantUid)
      } else if (want.kind === 'REJECTED') {
        expect(got!.rejectReason?.code, id).toBe(want.code)
      } else {
        expect(got).toMatchObject({ shopUid: null, shop: null, rejectReason: null })
        expect(got!.handle).not.toBeNull()
      }
    }

    // One findBy per record that reached the API (never cached), and one shop
    // read per distinct shop (the table and single-flight absorb repeats).
    const stats = (await (await fetch(`${world.sim.url}/__admin/stats`)).json()) as {
      lookups: number
      requests: { byOperation: Record<string, number> }
    }
    // The simulator counts lookups it answered (found or not found; a 400 is not a lookup).
    const answered = [...expected.values()].filter(
      (e) => e.kind === 'MATCHED' || e.kind === 'NOT_FOUND',
    ).length
    expect(stats.lookups - statsBefore.lookups).toBe(answered)
    const delta = (op: string) =>
      (stats.requests.byOperation[op] ?? 0) - (statsBefore.requests.byOperation[op] ?? 0)
    const transferRecords = events.filter((e) => e.transfer !== null).length
    const cardRecords = events.filter((e) => e.card !== null).length
    expect(
      delta('findByBankTransferCertis') + delta('findByBankTransferSepa') + delta('findByBankTransferUk'),
    ).toBe(transferRecords)
    const shopUids = new Set([...expected.values()].flatMap((e) => (e.kind === 'MATCHED' ? [e.shopUid] : [])))
    if (mode === 'single') {
      // Plain lookups: details from the table, the API on a miss, one read per distinct shop.
      expect(delta('findByCardTransaction')).toBe(cardRecords)
      expect(delta('getShop')).toBe(shopUids.size)
    } else {
      // Micro-batching: far fewer calls than card records. The table starts empty, so
      // the batches use the complete variant and card shops need no extra read.
      expect(delta('findByCardTransaction') + delta('completeFindByCardTransaction')).toBe(0)
      const batches = delta('findByCardTransactionBatch') + delta('completeFindByCardTransactionBatch')
      expect(batches).toBeGreaterThan(0)
      expect(batches).toBeLessThan(cardRecords / 2)
      expect(delta('completeFindByCardTransactionBatch')).toBeGreaterThan(0)
      const transferShops = new Set(
        [...expected]
          .filter(([id, e]) => e.kind === 'MATCHED' && events.find((r) => r.transactionId === id)?.transfer)
          .map(([, e]) => (e as { shopUid: string }).shopUid),
      )
      expect(delta('getShop')).toBeLessThanOrEqual(transferShops.size)
    }

    // What was read from the API went to the refresher's input in the same transactions.
    const fetchedCodec = serde.topic(topics.fetched, 'MerchantDataFetched')
    const fetched = await Promise.all(
      (await readTopic(kit.kafka, topics.fetched)).map((r) => fetchedCodec.decode(r.value)),
    )
    expect(new Set(fetched.filter((f) => f.entityType === 'SHOP').map((f) => f.uid))).toEqual(shopUids)
    const merchantUids = new Set(
      [...expected.values()].flatMap((e) => (e.kind === 'MATCHED' ? [e.merchantUid] : [])),
    )
    expect(new Set(fetched.filter((f) => f.entityType === 'MERCHANT').map((f) => f.uid))).toEqual(
      merchantUids,
    )
    for (const f of fetched) expect(f.shop ?? f.merchant, f.uid).not.toBeNull()
    const published = await metricsRegistry.getSingleMetric('ingest_fetched_published_total')!.get()
    expect(published.values.reduce((sum, v) => sum + v.value, 0)).toBe(fetched.length)

    // Results counted by outcome once committed agree with what readers see.
    const out = await metricsRegistry.getSingleMetric('ingest_records_out_total')!.get()
    const byOutcome = Object.fromEntries(out.values.map((v) => [v.labels.outcome, v.value]))
    const want = (k: string) => [...expected.values()].filter((e) => e.kind === k).length
    expect(byOutcome).toEqual({
      MATCHED: want('MATCHED'),
      NOT_FOUND: want('NOT_FOUND'),
      REJECTED: want('REJECTED'),
      DLQ: want('DLQ'),
    })
  })
})
