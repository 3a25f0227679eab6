import { envVar, enrichmentApiVars, kafkaVars, observabilityVars, parse, tracingVars } from '@tep/config'
import { TOPICS } from '@tep/kafka'
import { z } from 'zod'

/**
 * Every environment variable transaction-ingest reads. The same object drives
 * validation, `--help` and the README table (formatEnvMarkdown).
 */
export const INGEST_ENV = {
  ...kafkaVars,
  ...observabilityVars,
  ...enrichmentApiVars,
  INGEST_LOOKUP_MODE: envVar(
    z.enum(['single', 'batch'], { message: 'expected single or batch' }),
    'card lookups: `single` (one findByCardTransaction GET per record) or `batch` (findByCardTransactionBatch POSTs of up to INGEST_BATCH_MAX records)',
    {
      default: 'batch',
    },
  ),
  INGEST_COMPLETE_LOOKUPS: envVar(
    z.enum(['auto', 'always', 'never'], { message: 'expected auto, always or never' }),
    'card lookups through the `complete` variants, which bring the found shop and merchant in the same answer: `auto` while more than 10% of recent lookups miss the local table (e.g. an empty table after a start), `always`, or `never` (details from the table, the API on a miss)',
    { default: 'auto' },
  ),
  INGEST_LOOKUP_REPROBE_INTERVAL: envVar(
    parse.duration,
    'a lookup variant the interface description does not publish (the batch POST, the `complete` variants) that the service answered 404, 405 or 501 for is remembered missing, its records use the plain lookups (in the end one findByCardTransaction GET each), and after this long one call tries it again',
    { default: '10m' },
  ),
  INGEST_BATCH_MAX: envVar(
    parse.integer(1, 500),
    'records per batch lookup call (the API accepts at most 500)',
    { default: '500' },
  ),
  INGEST_BATCH_LINGER: envVar(
    parse.duration,
    'how long a partly filled lookup batch waits for more records while another batch call is in flight; with none in flight it is sent at the end of the event-loop turn (the records of one fetch answer together)',
    { default: '5ms' },
  ),
  INGEST_CONCURRENCY: envVar(
    parse.integer(1, 10_000),
    'records enriched at the same time: the instance has one budget of INGEST_CONCURRENCY × INGEST_PARTITIONS_CONCURRENTLY records over all assigned partitions, any of which may use all of it (outputs still keep input order per partition); unset: 500 in batch mode, 2 × INGEST_API_MAX_CONCURRENT in single mode (128 by default: more records only wait for an API request slot, and their garbage costs CPU)',
    { optional: true },
  ),
  INGEST_PARTITIONS_CONCURRENTLY: envVar(
    parse.integer(1, 1_000),
    'second factor of the budget of records in flight (INGEST_CONCURRENCY × this: 2,000 by default in batch mode, 512 in single mode); the finished records of every assigned partition share one transaction',
    { default: '4' },
  ),
  INGEST_MAX_RECORDS_PER_TRANSACTION: envVar(
    parse.integer(1, 100_000),
    'input records committed per Kafka transaction, over all assigned partitions (the sends are split so that no partition batch nears the broker\'s 1 MB limit)',
    { default: '3000' },
  ),
  INGEST_SESSION_TIMEOUT: envVar(
    parse.duration,
    'consumer group session timeout: how long a crashed instance keeps its partitions before the group moves them',
    {
      default: '30s',
    },
  ),
  INGEST_API_MAX_CONCURRENT: envVar(
    parse.integer(1, 10_000),
    'enrichment API requests in flight at once for this instance (one credential)',
    { default: '64' },
  ),
  INGEST_API_RETRIES: envVar(
    parse.integer(0, 20),
    'retries of one API request (5xx, 429, network) before the failure pauses the partition',
    { default: '2' },
  ),
  INGEST_API_TIMEOUT: envVar(parse.duration, 'time allowed for an API answer (headers and body each)', {
    default: '10s',
  }),
  INVALIDATIONS_ENABLED: envVar(
    parse.boolean,
    'whether the invalidation feed keeps the shop/merchant table fresh; when false, table entries fetched more than 7 days ago are not used',
    {
      default: 'true',
    },
  ),
  INGEST_TABLE_TRANSCODE: envVar(
    parse.boolean,
    'load table records written with the table\'s own schema by transcoding their Avro bytes straight into the table (fast); false: every record is decoded into an object by avsc and encoded (the slower path, as an escape hatch)',
    { default: 'true' },
  ),
  INGEST_TABLE_LOADERS: envVar(
    parse.integer(1, 16),
    'most loader processes for a cold load of the table: a large table (250,000 records or more per process) is split by partition over them, each loading its share on its own core; unset: the CPUs available, at most 4',
    { optional: true },
  ),
  INGEST_STATE_DIR: envVar(
    parse.nonEmpty,
    'directory of the table checkpoint: the shop/merchant table and the topic offsets it reflects, written from time to time and at a clean stop, so that a restart reads it and replays only what the compacted topics got since (a checkpoint that does not match the topics is logged and ignored); unset: every start loads the table from the topics',
    { optional: true },
  ),
  INGEST_STATE_INTERVAL: envVar(
    parse.duration,
    'how often a running instance writes the table checkpoint (when the table moved since the last one)',
    { default: '5m' },
  ),
  INGEST_STATE_MAX_AGE: envVar(
    parse.duration,
    'a table checkpoint older than this is not used (compaction removes tombstones after delete.retention.ms, 24 h by default, so an old checkpoint could miss deletions)',
    { default: '12h' },
  ),
  INGEST_GROUP_ID: envVar(parse.nonEmpty, 'consumer group of the ingest instances', {
    default: 'transaction-ingest',
  }),
  INGEST_TRANSACTIONAL_ID_PREFIX: envVar(
    parse.nonEmpty,
    'prefix of the transactional id, one per instance: <prefix>-<INGEST_INSTANCE_ID>; the same for every instance of the service',
    {
      default: 'transaction-ingest',
    },
  ),
  INGEST_INSTANCE_ID: envVar(
    parse.nonEmpty,
    'name of this instance in logs, in MerchantDataFetched.fetchedBy and in its transactional id; a stable name (pod name) lets a restart abort its predecessor\'s open transaction at once (default: host name and process id)',
    { optional: true },
  ),
  INGEST_INPUT_TOPIC: envVar(parse.nonEmpty, 'raw transactions to enrich', {
    default: TOPICS.transactionsRaw,
  }),
  INGEST_ENRICHED_TOPIC: envVar(parse.nonEmpty, 'enriched transactions', {
    default: TOPICS.transactionsEnriched,
  }),
  INGEST_DLQ_TOPIC: envVar(parse.nonEmpty, 'dead letters (undecodable or invalid raw records)', {
    default: TOPICS.transactionsDlq,
  }),
  INGEST_FETCHED_TOPIC: envVar(
    parse.nonEmpty,
    'shops and merchants fetched on a table miss, for the refresher',
    { default: TOPICS.merchantFetched },
  ),
  INGEST_SHOPS_TOPIC: envVar(parse.nonEmpty, 'compacted shop snapshots (the table source)', {
    default: TOPICS.merchantShops,
  }),
  INGEST_MERCHANTS_TOPIC: envVar(parse.nonEmpty, 'compacted merchant snapshots (the table source)', {
    default: TOPICS.merchantMerchants,
  }),
  // Last: rarely set, and @tep/tracing validates them itself.
  ...tracingVars,
}
