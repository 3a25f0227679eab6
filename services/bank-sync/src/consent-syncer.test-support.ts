/** What the syncConsent unit tests share: a fixed clock, a syncing consent's dates, and the syncer's dependencies. */
import type { BankClient } from '@tep/bank-client'
import { SILENT_LOGGER } from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import type { Consent } from '@tep/schemas'
import type { TokenCipher } from '@tep/token-cipher'
import { DEFAULT_SYNC_SETTINGS, type SyncWrite, type UnsavedTokens } from './sync-deps.ts'
import { createBankSyncMetrics } from './metrics.ts'

export const NOW = Date.parse('2026-05-04T08:00:00Z')
export const DAY = 86_400_000

/** Granted a day ago for 60 days, its access token valid 50 more minutes as far as bank-sync knows, no accounts yet. */
export const SYNCING_CONSENT_DATES = {
  accessTokenExpiresAt: NOW + 3_000_000,
  grantedAt: NOW - DAY,
  tokenIssuedAt: NOW - DAY,
  expiresAt: NOW + 60 * DAY,
  refreshTokenExpiresAt: NOW + 60 * DAY,
  accounts: [],
} satisfies Partial<Consent>

/**
 * syncConsent's dependencies at NOW, with default settings and no logs: `commit`
 * records each write (after `onCommit`) and answers the consent one version on
 * from the last one committed, starting at `start`.
 */
export function syncDeps(bank: BankClient, cipher: TokenCipher, start: Consent, onCommit?: (w: SyncWrite) => void) {
  const writes: SyncWrite[] = []
  let current = start
  const registry = createMetricsRegistry({ service: 'test', defaultMetrics: false })
  const deps = {
    bank,
    cipher,
    now: () => NOW,
    settings: DEFAULT_SYNC_SETTINGS,
    metrics: createBankSyncMetrics(registry),
    logger: SILENT_LOGGER,
    unsavedTokens: new Map<string, UnsavedTokens>(),
    commit: async (w: SyncWrite) => {
      onCommit?.(w)
      writes.push(w)
      current = { ...w.consent, version: current.version + 1 }
      return current
    },
  }
  return { deps, writes, registry }
}
