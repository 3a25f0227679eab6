import {
  avroSchema,
  CORRECTION_HEADER,
  type EnrichedTransaction,
  type MerchantDataFetched,
  type RawTransaction,
} from '@tep/schemas'
import {
  SplicingEncoder,
  type AvroSerde,
  type OutputRecord,
  type PipelineRecord,
  type TopicCodec,
} from '@tep/kafka'
import { validateRaw, type Enricher, type EnrichResult } from './enricher.ts'
import type { IngestMetrics } from './metrics.ts'
import type { OutcomeTracker } from './outcome-tracker.ts'

/** The Avro side of the transform: the raw codec, the enriched event's splicing encoder, the fetched event's codec. */
export interface IngestCodecs {
  raw: TopicCodec<RawTransaction>
  enriched: SplicingEncoder<EnrichedTransaction>
  fetched: TopicCodec<MerchantDataFetched>
}

/**
 * Registers the output schemas and builds the codecs of one ingest instance.
 * encodeSync in the transform needs the ids; registering up front also fails
 * fast on an incompatible schema instead of at the first record.
 */
export async function createIngestCodecs(
  serde: AvroSerde,
  topics: { input: string; enriched: string; fetched: string },
): Promise<IngestCodecs> {
  const raw = serde.topic(topics.input, 'RawTransaction')
  const enrichedCodec = serde.topic(topics.enriched, 'EnrichedTransaction')
  const fetched = serde.topic(topics.fetched, 'MerchantDataFetched')
  const [enrichedSchemaId] = await Promise.all([enrichedCodec.register(), fetched.register()])
  // The raw event inside the enriched one is copied as the bytes it arrived as,
  // and the shop and merchant as the bytes the table writes (no objects in between).
  const enriched = new SplicingEncoder(enrichedCodec, enrichedSchemaId, [
    { field: 'raw', schema: raw.schema },
    { field: 'shop', schema: avroSchema('Shop') },
    { field: 'merchant', schema: avroSchema('Merchant') },
  ])
  return { raw, enriched, fetched }
}

export interface RecordTransformParts {
  codecs: IngestCodecs
  enricher: Enricher
  outcomes: OutcomeTracker
  metrics: IngestMetrics
  topics: { enriched: string; fetched: string }
}

/**
 * A raw event republished to correct an earlier result (the refresher's
 * re-enrichment of invalidated handles) carries `tep-correction`; the new
 * result carries it too, so consumers can tell a correction from a first result.
 */
function correctionHeaders(record: PipelineRecord): Pick<OutputRecord, 'headers'> {
  const value = record.headers[CORRECTION_HEADER]
  const first = Array.isArray(value) ? value[0] : value
  return first === undefined ? {} : { headers: { [CORRECTION_HEADER]: first } }
}

/**
 * The ingest's transform of one raw record: decode, validate, enrich, encode the
 * enriched event and the snapshots fetched for it, note its outcome for the
 * committed counts. Its own file so that a bench can run it without Kafka
 * (test/bench/ingest-transform.ts) on exactly the code the service runs.
 *
 * Not an async function, and the encoding handed to `Enricher.enrichThen` instead
 * of `await enricher.enrich(raw)`: a record then waits for its lookup as one `then`
 * on the lookup's promise, not as four suspended async functions (the transform, the enrichment, its
 * minimisation, the lookup step) whose frames, promises and closures were a large
 * part of batch mode's garbage (docs/DECISIONS.md, issue 36). It still always
 * answers with a promise, and whatever any step throws rejects it, as before.
 */
export function recordTransform(parts: RecordTransformParts): (record: PipelineRecord) => Promise<OutputRecord[]> {
  const { codecs, enricher, outcomes, metrics, topics } = parts

  /** The outputs of a record once its enrichment is known. */
  function outputsOf(record: PipelineRecord, raw: RawTransaction, rawBody: Buffer | undefined, result: EnrichResult): OutputRecord[] {
    const { enriched, fetched, shopAvro, merchantAvro } = result
    const outputs: OutputRecord[] = [
      // Same key as the raw record, so the result lands on the matching partition.
      {
        topic: topics.enriched,
        key: record.key ?? raw.transactionId,
        // A raw event whose free text was masked (minimise-raw.ts) is written from the object, not its bytes.
        value: codecs.enriched.encode(enriched, [enriched.raw === raw ? rawBody : undefined, shopAvro, merchantAvro]),
        ...correctionHeaders(record),
      },
    ]
    for (const f of fetched) outputs.push({ topic: topics.fetched, key: f.uid, value: codecs.fetched.encodeSync(f) })
    let fetchedShops = 0
    for (const f of fetched) if (f.entityType === 'SHOP') fetchedShops += 1
    outcomes.note(record.topic, record.partition, record.offset, enriched.status, fetchedShops, fetched.length - fetchedShops)
    return outputs
  }

  /** Validates the decoded record and starts its lookup; throws what is wrong with the record. */
  function enrich(record: PipelineRecord, raw: RawTransaction, rawBody: Buffer | undefined): Promise<OutputRecord[]> {
    validateRaw(raw)
    return enricher.enrichThen(raw, (result) => outputsOf(record, raw, rawBody, result))
  }

  return (record) => {
    try {
      metrics.recordsIn.inc()
      // Once the writer schema is known (every record but the first few) the decode needs no promise.
      const decoded = codecs.raw.decodeWithBodyIfReady(record.value)
      if (decoded !== undefined) return enrich(record, decoded.value, decoded.body)
      return codecs.raw.decodeWithBody(record.value).then((d) => enrich(record, d.value, d.body))
    } catch (err) {
      // A bad record (undecodable, invalid, unpreparable) rejects, as the async transform's throw did.
      return Promise.reject(err)
    }
  }
}
