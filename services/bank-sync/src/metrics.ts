import {
  counter,
  gauge,
  histogram,
  type Counter,
  type Gauge,
  type Histogram,
  type Registry,
} from '@tep/observability'

export interface BankSyncMetrics {
  /** Owned consents by status (this instance's partitions). */
  consents: Gauge<string>
  syncs: Counter<string>
  syncDuration: Histogram<string>
  pages: Counter<string>
  transactions: Counter<string>
  rawEvents: Counter<string>
  tokenRefreshes: Counter<string>
  revocations: Counter<string>
  expiring: Counter<string>
  expired: Counter<string>
  apiErrors: Counter<string>
  consentWrites: Counter<string>
  gatewayRequests: Counter<string>
  malformedEntries: Counter<string>
  ownedPartitions: Gauge<string>
  legacyTokenBindings: Counter<string>
}

export function createBankSyncMetrics(registry: Registry): BankSyncMetrics {
  return {
    consents: gauge(registry, 'bank_sync_consents', 'consents owned by this instance, by status', ['status']),
    syncs: counter(registry, 'bank_sync_syncs_total', 'consent syncs by outcome', ['outcome']),
    syncDuration: histogram(
      registry,
      'bank_sync_sync_duration_seconds',
      'time of one consent sync (fetch and commit)',
      [],
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    ),
    pages: counter(registry, 'bank_sync_pages_total', 'transaction pages read from the bank'),
    transactions: counter(
      registry,
      'bank_sync_transactions_total',
      'records written to bank.transactions.v1, by change type',
      ['change'],
    ),
    rawEvents: counter(registry, 'bank_sync_raw_events_total', 'raw events written to transactions.raw.v1'),
    tokenRefreshes: counter(
      registry,
      'bank_sync_token_refreshes_total',
      'access token refreshes by outcome: ok, refused (the bank refused the refresh token), failed (no answer: outage, throttling)',
      ['outcome'],
    ),
    revocations: counter(
      registry,
      'bank_sync_revocations_total',
      'consents marked REVOKED after the bank refused them',
    ),
    expiring: counter(
      registry,
      'bank_sync_expiring_consents_total',
      'accounts consents announced as EXPIRING',
    ),
    expired: counter(
      registry,
      'bank_sync_expired_consents_total',
      'accounts consents marked EXPIRED after their 90 days',
    ),
    apiErrors: counter(registry, 'bank_sync_api_errors_total', 'bank API failures by error code', ['code']),
    consentWrites: counter(registry, 'bank_sync_consent_writes_total', 'consent records written, by reason', [
      'reason',
    ]),
    gatewayRequests: counter(
      registry,
      'bank_sync_gateway_requests_total',
      'consent gateway requests by route and outcome',
      ['route', 'outcome'],
    ),
    malformedEntries: counter(
      registry,
      'bank_sync_malformed_entries_total',
      'bank entries skipped (UNREADABLE) or kept from enrichment (RAW_RULES) because they are malformed',
      ['reason'],
    ),
    ownedPartitions: gauge(
      registry,
      'bank_sync_owned_partitions',
      'partitions of bank.consents.v1 owned by this instance',
    ),
    legacyTokenBindings: counter(
      registry,
      'bank_sync_legacy_token_bindings_total',
      'consent syncs that opened tokens sealed with the legacy binding (consentId only); the sync seals them again bound to the customer',
    ),
  }
}
