import {
  counter,
  gauge,
  histogram,
  type Counter,
  type Gauge,
  type Histogram,
  type Registry,
} from '@tep/observability'

/** Every metric transaction-ingest exposes, created once per instance on its registry. */
export interface IngestMetrics {
  recordsIn: Counter<string>
  /** outcome: MATCHED, NOT_FOUND, REJECTED, DLQ. */
  recordsOut: Counter<string>
  /** operation: findByCardTransaction, findByCardTransactionBatch, findByBankTransfer/<scheme>, getShop, getMerchant; result: ok, rejected, or the error code. */
  apiDuration: Histogram<string>
  batchSize: Histogram<string>
  /** Whole-batch 400s answered by falling back to single calls. */
  batchFallbacks: Counter<string>
  /** 1 while an unpublished lookup variant is remembered missing (404/405/501), by operation. */
  lookupVariantsMissing: Gauge<string>
  /** Pipeline retries of a Kafka batch after a systemic failure. */
  retries: Counter<string>
  /** Consumer pauses, by reason (error code). */
  pauses: Counter<string>
  /** Consumers re-created after the client gave up on a fetch or a group rejoin (broker failovers). */
  consumerRecoveries: Counter<string>
  /** Input offsets skipped unread: retention removed the records before the consumer read them. */
  inputSkipped: Counter<string>
  consumerLag: Gauge<string>
  /** table: shops, merchants; reason: absent, stale. */
  tableMisses: Counter<string>
  tableHits: Counter<string>
  /** MerchantDataFetched records produced for the refresher, by entity. */
  fetchedPublished: Counter<string>
  /** Card numbers masked, by path: enrichment-input, reject-reason, dlq (minimise-raw.ts). */
  panMasked: Counter<string>
}

const SIZE_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 200, 300, 400, 500]

export function createIngestMetrics(registry: Registry): IngestMetrics {
  return {
    recordsIn: counter(
      registry,
      'ingest_records_in_total',
      'Raw records taken from transactions.raw.v1 (counted once per processing attempt)',
    ),
    recordsOut: counter(
      registry,
      'ingest_records_out_total',
      'Results produced, by outcome (MATCHED, NOT_FOUND, REJECTED, DLQ); counted when the transaction commits',
      ['outcome'],
    ),
    apiDuration: histogram(
      registry,
      'ingest_api_request_duration_seconds',
      'Enrichment API call latency by operation and result',
      ['operation', 'result'],
    ),
    consumerRecoveries: counter(
      registry,
      'ingest_consumer_recoveries_total',
      'Consumers re-created in place after the Kafka client gave up (a fetch or group rejoin failing through a broker failover)',
    ),
    inputSkipped: counter(
      registry,
      'ingest_input_offsets_skipped_total',
      'Input offsets skipped unread because retention (or DeleteRecords) removed the records before the consumer reached them; the consumer reads on from the log start. Any increase is lost input',
      ['topic'],
    ),
    batchSize: histogram(
      registry,
      'ingest_api_batch_entries',
      'Entries per findByCardTransactionBatch call',
      [],
      SIZE_BUCKETS,
    ),
    batchFallbacks: counter(
      registry,
      'ingest_batch_fallbacks_total',
      'Whole-batch 400 answers isolated by falling back to single lookups',
    ),
    lookupVariantsMissing: gauge(
      registry,
      'ingest_lookup_variant_missing',
      'Lookup variants the description does not publish (batch, complete) that the service answered 404/405/501 for: 1 while their records use the plain lookups, until a re-probe finds them served',
      ['operation'],
    ),
    retries: counter(registry, 'ingest_retries_total', 'Kafka batches re-processed after a systemic failure'),
    pauses: counter(
      registry,
      'ingest_pauses_total',
      'Consumer pauses caused by systemic failures, by error code',
      ['reason'],
    ),
    consumerLag: gauge(
      registry,
      'ingest_consumer_lag',
      'Records between the last processed offset and the high watermark',
      ['topic', 'partition'],
    ),
    tableMisses: zeroed(
      counter(registry, 'ingest_table_misses_total', 'Table lookups that had to go to the API', [
        'table',
        'reason',
      ]),
      ['shops', 'merchants'].flatMap((table) => ['absent', 'stale'].map((reason) => ({ table, reason }))),
    ),
    // At 0 too: a cold table (every lookup a miss) otherwise shows "no data" for its hits.
    tableHits: zeroed(counter(registry, 'ingest_table_hits_total', 'Table lookups answered locally', ['table']), [{ table: 'shops' }, { table: 'merchants' }]),
    fetchedPublished: counter(
      registry,
      'ingest_fetched_published_total',
      'Fetched snapshots handed to the refresher',
      ['entity'],
    ),
    panMasked: counter(
      registry,
      'tep_pan_masked_total',
      'Card numbers masked before they could be stored or sent: free text of raw events before the enrichment call (enrichment-input), API reject reasons (reject-reason), DLQ records (dlq)',
      ['path'],
    ),
  }
}

/**
 * The counter with each of `series` at 0 from the start: a table that never misses
 * (every shop already held, as after a warm restart) still exports its series, so a
 * dashboard's rate() shows 0 instead of "no data" and an alert on it can evaluate.
 */
function zeroed(metric: Counter<string>, series: ReadonlyArray<Record<string, string>>): Counter<string> {
  for (const labels of series) metric.inc(labels, 0)
  return metric
}

/**
 * Times `call` into the API latency histogram. Not an async function, and no
 * startTimer (its closures, hrtime arrays and merged label objects): this runs
 * for every lookup.
 */
export function timed<T>(
  metrics: IngestMetrics | undefined,
  operation: string,
  call: () => Promise<T>,
  resultOf: (err: unknown) => string,
): Promise<T> {
  if (metrics === undefined) return call()
  const histogram = metrics.apiDuration
  const started = performance.now()
  let running: Promise<T>
  try {
    running = call()
  } catch (err) {
    running = Promise.reject(err)
  }
  return running.then(
    (value) => {
      histogram.observe({ operation, result: 'ok' }, (performance.now() - started) / 1000)
      return value
    },
    (err: unknown) => {
      histogram.observe({ operation, result: resultOf(err) }, (performance.now() - started) / 1000)
      throw err
    },
  )
}
