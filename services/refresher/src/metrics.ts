import { counter, gauge, histogram, type Registry } from '@tep/observability'

export function createRefresherMetrics(registry: Registry) {
  return {
    refreshed: counter(
      registry,
      'tep_refresher_written_total',
      'Snapshots written to the compacted topics, by entity and source (api, ingest)',
      ['entity', 'source'],
    ),
    tombstoned: counter(
      registry,
      'tep_refresher_tombstoned_total',
      'Tombstones written (the API no longer has the entity), by entity',
      ['entity'],
    ),
    skipped: counter(
      registry,
      'tep_refresher_skipped_total',
      'Inputs that caused no write, by entity and reason (stale, not-in-table, fresh, superseded, handle-level, ...)',
      ['entity', 'reason'],
    ),
    fetched: counter(registry, 'tep_refresher_api_reads_total', 'API reads made (after coalescing)'),
    apiLatency: histogram(
      registry,
      'tep_refresher_api_seconds',
      'Latency of shop and merchant reads, by operation and outcome',
      ['operation', 'outcome'],
    ),
    tableSize: gauge(
      registry,
      'tep_refresher_table_entries',
      'Live entries of the compacted topics as the refresher knows them, by entity',
      ['entity'],
    ),
    sweepStale: gauge(
      registry,
      'tep_refresher_sweep_stale_entries',
      'Entries old enough to be re-fetched at the last sweep, by entity',
      ['entity'],
    ),
    sweepRequested: counter(
      registry,
      'tep_refresher_sweep_requested_total',
      'Refresh requests published by the sweep, by entity',
      ['entity'],
    ),
    sweepLast: gauge(
      registry,
      'tep_refresher_sweep_last_run_seconds',
      'Unix time of the last completed sweep',
    ),
    unkeyed: counter(
      registry,
      'tep_refresher_unkeyed_invalidations_total',
      'Invalidation items that name no shop or merchant (the feed sent no key), by level as published (unknown: no level either)',
      ['level'],
    ),
    ageBoundUntil: gauge(
      registry,
      'tep_refresher_age_bound_until_seconds',
      'Unix time until which the sweep runs although invalidations are enabled, because items without a key arrived (0: never)',
    ),
    reenrichRuns: counter(
      registry,
      'tep_refresher_reenrich_runs_total',
      'Runs of the automatic re-enrichment of invalidated handles, by outcome (ok, error)',
      ['outcome'],
    ),
    reenrichRepublished: counter(
      registry,
      'tep_refresher_reenrich_republished_total',
      'Raw events republished with refresh=true because their handle was invalidated (one findBy each)',
    ),
    reenrichScanned: counter(
      registry,
      'tep_refresher_reenrich_scanned_total',
      'Enriched records read by re-enrichment runs (the Kafka cost)',
    ),
    reenrichDeferred: gauge(
      registry,
      'tep_refresher_reenrich_deferred',
      'Transactions selected at the last run but left for the next one by REENRICH_MAX_PER_RUN',
    ),
    reenrichLastRun: gauge(
      registry,
      'tep_refresher_reenrich_last_run_seconds',
      'Unix time of the last completed re-enrichment run',
    ),
    committed: counter(
      registry,
      'tep_refresher_records_committed_total',
      'Input records committed, by topic',
      ['topic'],
    ),
    deadLettered: counter(
      registry,
      'tep_refresher_records_dead_lettered_total',
      'Input records sent to the DLQ, by topic and code',
      ['topic', 'code'],
    ),
    paused: counter(
      registry,
      'tep_refresher_partition_pauses_total',
      'Systemic failures that paused a partition, by code',
      ['code'],
    ),
  }
}

export type RefresherMetrics = ReturnType<typeof createRefresherMetrics>
