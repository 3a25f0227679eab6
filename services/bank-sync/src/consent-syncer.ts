import {
  BankConsentRevokedError,
  BankHistoryRequiresFreshTokenError,
  BankThrottledError,
  bankToday,
  type CallOptions,
  type Transaction,
} from '@tep/bank-client'
import { errorCode, isRetriable } from '@tep/errors'
import type { AccountSyncState, BankTransaction, Consent, RawTransaction } from '@tep/schemas'
import { emptyAccountState, reconcileAccount } from './account-reconciler.ts'
import { SYNCING_STATUSES } from './consent-status.ts'
import { PartitionFencedError } from './errors.ts'
import { isCuredByRefresh, pausedOnUnauthorized } from './unauthorized-pause.ts'
import { planDateFrom, MAX_DAYS_WITHOUT_FRESH_TOKEN, addDays } from './sync-window.ts'
import { mapEntry } from './entry-mapping.ts'
import type { SyncDeps, SyncOutcome } from './sync-deps.ts'
import {
  ensureFreshAccessToken,
  hasFreshToken,
  openTokens,
  resealed,
  tokensNotSaved,
  TokensNotSavedError,
  writeUnsavedTokens,
  type Tokens,
} from './consent-tokens.ts'
import { endConsent, endVerdict, refreshRefusedConsentKept } from './end-verdict.ts'


/** The commit was refused: the consent became terminal (ended by the customer) while this sync ran. */
const ENDED_MEANWHILE: SyncOutcome = {
  kind: 'skipped',
  reason: 'the consent reached a terminal state during the sync; nothing published',
}

/**
 * One sync of one consent: keep it alive (expiry, tokens), read every account from
 * its watermark, and hand the result to `commit` as ONE write. Nothing is written
 * before the whole read succeeded, so a failure or crash mid-way leaves the
 * previous state, and the next sync redoes the same read.
 */
export async function syncConsent(start: Consent, deps: SyncDeps): Promise<SyncOutcome> {
  const { logger, metrics, settings } = deps
  let consent = start
  const log = { consentId: consent.consentId }
  if (!SYNCING_STATUSES.has(consent.status)) return { kind: 'skipped', reason: `status ${consent.status}` }

  // The bank rotated the refresh token and the stored one stops working after its grace:
  // write a kept pair before anything else, never refresh again from the stored one.
  const kept = await writeUnsavedTokens(consent, deps)
  if (kept.kind === 'failed') return tokensNotSaved(consent, kept.error, deps)
  if (kept.kind === 'ended') return ENDED_MEANWHILE
  if (kept.kind === 'written') consent = kept.consent

  const now = deps.now()
  if (consent.expiresAt !== null && now >= consent.expiresAt) {
    const ended = await endConsent(consent, 'EXPIRED', 'CONSENT_90_DAYS', deps)
    metrics.expired.inc()
    logger.warn(
      { ...log, expiresAt: new Date(consent.expiresAt).toISOString() },
      'consent expired (90 days); the customer must consent again',
    )
    return ended
  }
  if (
    consent.status === 'ACTIVE' &&
    consent.expiresAt !== null &&
    consent.expiresAt - now <= settings.expiryWarningMs
  ) {
    const written = await deps.commit({
      consent: { ...consent, status: 'EXPIRING', statusReason: 'CONSENT_ENDS_SOON', expiryNotifiedAt: now },
      bankTransactions: [],
      rawTransactions: [],
      reason: 'EXPIRING',
    })
    if (written === null) return ENDED_MEANWHILE
    consent = written
    metrics.expiring.inc()
    logger.warn(
      { ...log, customerId: consent.customerId, expiresAt: new Date(consent.expiresAt ?? now).toISOString() },
      'accounts consent ends soon: the customer must renew it',
    )
  }

  let tokens: Tokens
  try {
    const opened = openTokens(consent, deps.cipher)
    tokens = opened
    if (opened.legacyBinding) {
      metrics.legacyTokenBindings.inc()
      logger.warn(log, 'consent tokens sealed with the legacy binding (consentId only); this sync seals them again bound to the customer')
    }
  } catch (err) {
    // A key missing from the keyring is configuration: keep the consent, retry later. Tokens
    // bound to another customer (a record moved to another customerId) fail here too: nothing
    // is read from the bank for it.
    logger.error(
      { ...log, err },
      'cannot decrypt the consent tokens (is the key that sealed them in TOKEN_ENCRYPTION_KEY? was the record moved to another customer?)',
    )
    return { kind: 'backoff', code: errorCode(err), retryAfterMs: undefined, error: err }
  }

  try {
    const refreshed = await ensureFreshAccessToken(consent, tokens, deps, false)
    if (refreshed === null) return ENDED_MEANWHILE
    ;({ consent, tokens } = refreshed)
    let result: Awaited<ReturnType<typeof readAccounts>>
    try {
      result = await readAccounts(consent, tokens, deps)
    } catch (err) {
      if (!isCuredByRefresh(err)) throw err
      // The bank's clock ran ahead of ours, or it refused the token without saying why (a bare
      // 401 is most likely an expired access token, whatever lifetime we assumed): refresh once
      // and read again.
      const again = await ensureFreshAccessToken(consent, tokens, deps, true)
      if (again === null) return ENDED_MEANWHILE
      ;({ consent, tokens } = again)
      try {
        result = await readAccounts(consent, tokens, deps)
      } catch (still) {
        if (isCuredByRefresh(still)) return pausedOnUnauthorized(consent, err, still, deps)
        throw still
      }
    }
    const written = await deps.commit({
      consent: resealed({ ...consent, accounts: result.accounts }, deps.cipher),
      bankTransactions: result.bankTransactions,
      rawTransactions: result.rawTransactions,
      reason: 'SYNC',
    })
    if (written === null) return ENDED_MEANWHILE
    const added = result.bankTransactions.filter((t) => t.changeType === 'ADDED').length
    return {
      kind: 'synced',
      consent: written,
      added,
      modified: result.bankTransactions.length - added,
      raw: result.rawTransactions.length,
      pages: result.pages,
    }
  } catch (err) {
    if (err instanceof PartitionFencedError) throw err
    if (err instanceof TokensNotSavedError) return tokensNotSaved(consent, err.cause, deps)
    if (err instanceof BankConsentRevokedError) {
      const verdict = await endVerdict(consent, err, tokens.accessToken, deps)
      if (verdict === 'ALIVE' || verdict === 'UNANSWERED') return refreshRefusedConsentKept(consent, err, verdict, deps)
      const ended =
        verdict === 'EXPIRED'
          ? await endConsent(consent, 'EXPIRED', 'CONSENT_90_DAYS', deps)
          : await endConsent(consent, 'REVOKED', err.reason ?? 'HTTP_401', deps)
      if (verdict === 'EXPIRED') metrics.expired.inc()
      else metrics.revocations.inc()
      logger.warn(
        { ...log, customerId: consent.customerId, reason: err.reason, requestId: err.requestId },
        verdict === 'EXPIRED'
          ? 'consent expired (90 days, by the bank answer); the customer must consent again'
          : 'the bank revoked the consent: syncing stops, the customer must consent again',
      )
      return ended
    }
    const code = errorCode(err)
    metrics.apiErrors.inc({ code })
    const retryAfterMs = err instanceof BankThrottledError ? err.retryAfterMs : undefined
    if (isRetriable(err))
      logger.warn({ ...log, code, retryAfterMs }, 'bank sync failed; backing off this consent')
    else logger.error({ ...log, err }, 'bank sync failed; backing off this consent')
    return { kind: 'backoff', code, retryAfterMs, error: err }
  }
}

async function readAccounts(
  consent: Consent,
  tokens: Tokens,
  deps: SyncDeps,
): Promise<{
  accounts: AccountSyncState[]
  bankTransactions: BankTransaction[]
  rawTransactions: RawTransaction[]
  pages: number
}> {
  const call: CallOptions = { accessToken: tokens.accessToken, user: { involved: false } }
  const accounts = await deps.bank.accounts.listAccounts(call)
  const states: AccountSyncState[] = []
  const bankTransactions: BankTransaction[] = []
  const rawTransactions: RawTransaction[] = []
  let pages = 0
  for (const account of accounts) {
    const now = deps.now()
    const today = bankToday(new Date(now))
    const previous =
      consent.accounts.find((a) => a.accountId === account.id) ??
      emptyAccountState(account.id, account.currency ?? null, deps.settings.overlapDays)
    const seenDates = new Map(previous.seenEntries.map((s) => [s.entryReference, s.date]))
    let oldestPending: string | null = null
    for (const ref of previous.pendingEntryReferences) {
      const d = seenDates.get(ref)
      if (d !== undefined && (oldestPending === null || d < oldestPending)) oldestPending = d
    }
    const plan = planDateFrom({
      today,
      lastBookingDate: previous.lastBookingDate,
      overlapDays: previous.overlapDays,
      oldestPendingDate: oldestPending,
      freshToken: hasFreshToken(consent, now, deps.settings.freshTokenMs),
      backfillDays: deps.settings.backfillDays,
    })
    if (plan.clamped) {
      deps.logger.warn(
        {
          consentId: consent.consentId,
          accountId: account.id,
          lastBookingDate: previous.lastBookingDate,
          dateFrom: plan.dateFrom,
        },
        'account not synced for longer than the bank keeps history without a fresh token: entries in between cannot be read',
      )
    }
    let items: Transaction[]
    try {
      ;({ items, pages } = await readHistory(deps, account.id, plan.dateFrom, call, pages))
    } catch (err) {
      if (!(err instanceof BankHistoryRequiresFreshTokenError) || !plan.needsFreshToken) throw err
      // The token was not fresh enough after all: settle for what the bank allows.
      const dateFrom = addDays(today, -MAX_DAYS_WITHOUT_FRESH_TOKEN)
      deps.logger.warn(
        { consentId: consent.consentId, accountId: account.id, dateFrom },
        'the bank refused the history backfill (token no longer fresh); reading the last 89 days instead',
      )
      ;({ items, pages } = await readHistory(deps, account.id, dateFrom, call, pages))
    }
    const fetchedAt = deps.now()
    const r = reconcileAccount(previous, items, { today, now: fetchedAt })
    if (r.evicted > 0) {
      deps.logger.warn(
        { consentId: consent.consentId, accountId: account.id, evicted: r.evicted },
        'seen set over its bound: oldest entries dropped',
      )
    }
    for (const change of r.changes) {
      const ctx = {
        consentId: consent.consentId,
        customerId: consent.customerId,
        accountId: account.id,
        entry: change.entry,
        fetchedAt,
      }
      const mapped = mapEntry(change.item, ctx, change.changeType, change.emitRaw, deps)
      if (mapped.bankTransaction !== undefined) bankTransactions.push(mapped.bankTransaction)
      if (mapped.rawTransaction !== undefined) rawTransactions.push(mapped.rawTransaction)
    }
    states.push({ ...r.state, currency: account.currency ?? r.state.currency })
  }
  return { accounts: states, bankTransactions, rawTransactions, pages }
}

async function readHistory(
  deps: SyncDeps,
  accountId: string,
  dateFrom: string,
  call: CallOptions,
  pagesSoFar: number,
): Promise<{ items: Transaction[]; pages: number }> {
  const items: Transaction[] = []
  let pages = pagesSoFar
  for await (const page of deps.bank.accounts.transactionPages(
    accountId,
    { dateFrom, pageSize: deps.settings.pageSize },
    call,
  )) {
    pages++
    deps.metrics.pages.inc()
    items.push(...page.items)
  }
  return { items, pages }
}
