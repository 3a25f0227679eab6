import {
  BankAccessTokenExpiredError,
  BankConsentRevokedError,
  BankHistoryRequiresFreshTokenError,
  BankThrottledError,
  BankUnexplainedUnauthorizedError,
  bankToday,
  type BankScope,
  type CallOptions,
  type Transaction,
} from '@tep/bank-client'
import { errorCode, isRetriable } from '@tep/errors'
import type { AccountSyncState, BankTransaction, Consent, RawTransaction } from '@tep/schemas'
import type { TokenCipher } from '@tep/token-cipher'
import { emptyAccountState, reconcileAccount } from './account-reconciler.ts'
import { SYNCING_STATUSES } from './consent-status.ts'
import { PartitionFencedError, RefreshTokenRefusedError } from './errors.ts'
import { isCuredByRefresh, pausedOnUnauthorized } from './unauthorized-pause.ts'
import { openConsentToken, resealConsentToken, sealConsentToken } from './consent-binding.ts'
import { planDateFrom, MAX_DAYS_WITHOUT_FRESH_TOKEN, addDays } from './sync-window.ts'
import { mapEntry } from './entry-mapping.ts'
import type { SyncDeps, SyncOutcome } from './sync-deps.ts'

export { DEFAULT_SYNC_SETTINGS } from './sync-deps.ts'
export type { SyncDeps, SyncLogger, SyncOutcome, SyncSettings, SyncWrite, UnsavedTokens } from './sync-deps.ts'

/** The commit was refused: the consent became terminal (ended by the customer) while this sync ran. */
const ENDED_MEANWHILE: SyncOutcome = {
  kind: 'skipped',
  reason: 'the consent reached a terminal state during the sync; nothing published',
}

interface Tokens {
  accessToken: string
  refreshToken: string
}

function scopeOf(consent: Consent): BankScope {
  const s = consent.scopes[0]
  return s === 'PISP' || s === 'CISP' ? s : 'AISP'
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

function openTokens(consent: Consent, cipher: TokenCipher): Tokens & { legacyBinding: boolean } {
  if (consent.accessToken === null || consent.refreshToken === null) {
    throw new Error(`consent ${consent.consentId} is ${consent.status} but has no tokens`)
  }
  const access = openConsentToken(cipher, consent.accessToken, consent)
  const refresh = openConsentToken(cipher, consent.refreshToken, consent)
  return { accessToken: access.token, refreshToken: refresh.token, legacyBinding: access.legacy || refresh.legacy }
}

/**
 * Key rotation and binding migration: tokens sealed with a key that is no longer the
 * active one, or with the legacy binding (consentId only), are sealed again with the
 * active key and the customer binding in the sync's own write, so after one sync round
 * no consent needs the old key or the legacy binding (docs/security.md).
 */
export function resealed(consent: Consent, cipher: TokenCipher): Consent {
  const again = (envelope: string | null): string | null =>
    envelope === null ? null : resealConsentToken(cipher, envelope, consent)
  return { ...consent, accessToken: again(consent.accessToken), refreshToken: again(consent.refreshToken) }
}

/** Writes the consent's end (its tokens dropped, no transactions); the outcome names the status as written. */
async function endConsent(
  consent: Consent,
  status: 'EXPIRED' | 'REVOKED',
  statusReason: string,
  deps: SyncDeps,
): Promise<SyncOutcome> {
  const written = await deps.commit({
    consent: { ...endTokens(consent), status, statusReason },
    bankTransactions: [],
    rawTransactions: [],
    reason: status,
  })
  return { kind: 'stopped', status: written?.status ?? status }
}

export function endTokens(consent: Consent): Consent {
  return { ...consent, accessToken: null, refreshToken: null, accessTokenExpiresAt: null }
}

/** The consents topic refused a rotated token pair's write (broker outage...). */
class TokensNotSavedError extends Error {
  override readonly cause: unknown
  constructor(cause: unknown) {
    super('the rotated tokens could not be written to the consents topic', { cause })
    this.cause = cause
  }
}

/** An outage pauses the consent (with the rotated tokens kept in memory); it never ends it. */
function tokensNotSaved(consent: Consent, err: unknown, deps: SyncDeps): SyncOutcome {
  const code = errorCode(err)
  deps.metrics.apiErrors.inc({ code })
  deps.logger.warn(
    { consentId: consent.consentId, code, err },
    'cannot write the rotated bank tokens to the consents topic (Kafka unavailable?): this consent pauses; ' +
      'the tokens are kept in memory and written as soon as Kafka takes writes again',
  )
  return { kind: 'backoff', code, retryAfterMs: undefined, error: err }
}

export type UnsavedTokensWrite =
  /** Nothing kept for this consent (or the kept pair was outdated and is dropped). */
  | { kind: 'none' }
  | { kind: 'written'; consent: Consent }
  /** The consent became terminal meanwhile: the kept pair is dropped, nothing written. */
  | { kind: 'ended' }
  /** Kafka still refuses the write: the pair stays kept. */
  | { kind: 'failed'; error: unknown }

/**
 * Writes the rotated token pair kept for this consent (`unsavedTokens`), alone: no bank
 * call, no transactions. The sync calls it first; the partition owner also calls it on
 * its own short retry (as soon as Kafka takes writes again, not only at the consent's
 * next sync, which a backoff can put minutes away) and before it gives the partition up:
 * until this write lands, the stored refresh token is the rotated-out one, and whoever
 * syncs the consent next from the topic (another instance after a rebalance, or this one
 * after a restart) holds no working refresh token.
 * Throws PartitionFencedError (another instance owns the partition now).
 */
export async function writeUnsavedTokens(consent: Consent, deps: SyncDeps): Promise<UnsavedTokensWrite> {
  const unsaved = deps.unsavedTokens.get(consent.consentId)
  if (unsaved === undefined) return { kind: 'none' }
  if (consent.refreshToken !== unsaved.basedOn) {
    // Written after all (a commit reported failed but landed), or the consent was granted anew.
    deps.unsavedTokens.delete(consent.consentId)
    return { kind: 'none' }
  }
  if (!SYNCING_STATUSES.has(consent.status)) {
    // Ended (by the customer, the bank or time): its tokens are dropped, never written back.
    deps.unsavedTokens.delete(consent.consentId)
    return { kind: 'ended' }
  }
  let written: Consent | null
  try {
    written = await deps.commit({
      consent: { ...consent, ...unsaved.fields },
      bankTransactions: [],
      rawTransactions: [],
      reason: 'TOKEN_REFRESH',
    })
  } catch (err) {
    if (err instanceof PartitionFencedError) throw err
    return { kind: 'failed', error: err }
  }
  deps.unsavedTokens.delete(consent.consentId)
  if (written === null) return { kind: 'ended' }
  deps.logger.info({ consentId: consent.consentId }, 'rotated tokens kept in memory are now written; syncing resumes')
  return { kind: 'written', consent: written }
}

/**
 * What a 401 (or a refused refresh) means for the consent:
 * - `EXPIRED` / `REVOKED`: the consent is over; written as such, syncing stops.
 * - `ALIVE`: the bank refused the refresh token, yet its answer to the access token shows the
 *   consent alive (200, or "this access token expired" rather than "revoked"/"consent expired").
 *   That is a refresh token the bank rotated out: a newer pair was issued, to an instance that
 *   could not write it to the consents topic (Kafka outage) and then lost the partition or its
 *   memory. A credential problem of ours, not the customer's choice: the consent pauses.
 * - `UNANSWERED`: the bank could not be asked (unavailable, throttled): an outage, pause too.
 *
 * The spec gives a user's revocation and the end of an accounts consent's 90 days the same
 * answer (401, or invalid_grant at the token endpoint), so the verdict is, in order:
 * 1. the bank's own reason on an API call (REASON CONSENT_EXPIRED, or another reason: revoked);
 * 2. for a refused refresh (no reason), one API call with the current access token to get that
 *    reason (the bank answers 401 for a dead consent whatever the token's age: the simulator
 *    checks revocation and the 90 days before the token's expiry). A consent the bank shows
 *    alive (see ALIVE) is not ended: the spec says "Refresh fails (for example the user
 *    removed consent)", and a token rotated out by our own refresh is not that;
 * 3. else the consent's known end (for accounts: the refresh token's 90 days) against the
 *    bank's clock (the answer's Date header; ours when absent or behind): passed → EXPIRED;
 *    else ALIVE/UNANSWERED as the API call said, else REVOKED.
 */
async function endVerdict(
  consent: Consent,
  err: BankConsentRevokedError,
  accessToken: string | undefined,
  deps: SyncDeps,
): Promise<'EXPIRED' | 'REVOKED' | 'ALIVE' | 'UNANSWERED'> {
  const reason = endReason(err)
  if (reason !== undefined) return reason
  let probe: 'ALIVE' | 'UNANSWERED' | undefined
  if (accessToken !== undefined) {
    try {
      await deps.bank.accounts.listAccounts({ accessToken, user: { involved: false } })
      // The bank serves the consent: whatever the refresh refusal was, it was not its end.
      return 'ALIVE'
    } catch (probed) {
      if (probed instanceof BankConsentRevokedError) {
        const said = endReason(probed)
        if (said !== undefined) return said
      } else if (probed instanceof BankAccessTokenExpiredError) {
        probe = 'ALIVE'
      } else if (probed instanceof BankUnexplainedUnauthorizedError) {
        // A 401 that says nothing: the bank does not serve the consent either, so it confirms
        // the refused refresh (invalid_grant), which is the explicit signal; left to the end check.
      } else if (isRetriable(probed)) {
        probe = 'UNANSWERED'
      }
    }
  }
  if (pastEnd(consent, err, deps.now())) return 'EXPIRED'
  return probe ?? 'REVOKED'
}

/**
 * A refused refresh of a consent the bank has not ended (endVerdict ALIVE or UNANSWERED):
 * the consent stays as it is (ACTIVE, tokens kept) and backs off like any failure. Each
 * retry re-reads the consent as stored, so it resumes as soon as the newest tokens are
 * written to the consents topic (by the instance that holds them); it ends only when the
 * bank says so (revoked, 90 days). Said loudly: if those tokens are lost, the customer has
 * to consent again, and an operator should know why the consent stopped syncing.
 */
function refreshRefusedConsentKept(
  consent: Consent,
  err: BankConsentRevokedError,
  verdict: 'ALIVE' | 'UNANSWERED',
  deps: SyncDeps,
): SyncOutcome {
  const error = new RefreshTokenRefusedError(consent.consentId, verdict === 'ALIVE', err)
  deps.metrics.apiErrors.inc({ code: error.code })
  deps.logger.error(
    { consentId: consent.consentId, code: error.code, requestId: err.requestId, bankAnswered: verdict === 'ALIVE' },
    verdict === 'ALIVE'
      ? 'the bank refused the stored refresh token but still serves the consent: a newer token pair was ' +
          'issued and never written (Kafka outage?); the consent is kept and pauses until those tokens are written ' +
          '(else the customer must consent again)'
      : 'the bank refused the stored refresh token and could not be asked whether the consent lives: the consent is kept and pauses',
  )
  return { kind: 'backoff', code: error.code, retryAfterMs: undefined, error }
}

function endReason(err: BankConsentRevokedError): 'EXPIRED' | 'REVOKED' | undefined {
  if (err.reason === undefined) return undefined
  return err.reason === 'CONSENT_EXPIRED' ? 'EXPIRED' : 'REVOKED'
}

export function pastEnd(consent: Consent, err: BankConsentRevokedError, now: number): boolean {
  // The consent's end as the rest of the sync enforces it (for accounts: the refresh token's 90 days).
  const end = consent.expiresAt ?? consent.refreshTokenExpiresAt
  if (end === null) return false
  return Math.max(now, bankDateOf(err) ?? 0) >= end
}

function bankDateOf(err: BankConsentRevokedError): number | undefined {
  const headers = (err.cause as { headers?: Record<string, string | string[] | undefined> } | undefined)
    ?.headers
  const date = headers?.date
  if (typeof date !== 'string') return undefined
  const ms = Date.parse(date)
  return Number.isNaN(ms) ? undefined : ms
}

/**
 * Refreshes ahead of expiry. The bank rotates the refresh token (the old one works
 * only for a short grace, 60 s at the simulator), so the new pair is committed to the
 * consents topic BEFORE the new access token is used. If that write fails, the pair
 * is kept in `unsavedTokens` and written as soon as Kafka takes it (the partition owner's
 * short retry, its stop before giving the partition up, or else first thing in the next
 * sync): refreshing again from the stored (rotated-out) token is refused by the bank.
 */
async function ensureFreshAccessToken(
  consent: Consent,
  tokens: Tokens,
  deps: SyncDeps,
  force: boolean,
): Promise<{ consent: Consent; tokens: Tokens } | null> {
  const now = deps.now()
  const expiresAt = consent.accessTokenExpiresAt
  if (!force && expiresAt !== null && expiresAt - now > deps.settings.refreshMarginMs)
    return { consent, tokens }
  let next
  try {
    next = await deps.bank.authorization.refresh(tokens.refreshToken, {
      scope: scopeOf(consent),
      refreshTokenExpiresAt:
        consent.refreshTokenExpiresAt === null ? null : new Date(consent.refreshTokenExpiresAt),
    })
  } catch (err) {
    // `refused`, not `revoked`: the bank refused the refresh token, and whether that ends the
    // consent (revoked, 90 days) or only pauses it (a token rotated out by a refresh whose pair
    // was never written) is the verdict's, counted apart (revocations, REFRESH_TOKEN_REFUSED).
    deps.metrics.tokenRefreshes.inc({
      outcome: err instanceof BankConsentRevokedError ? 'refused' : 'failed',
    })
    throw err
  }
  const sealed: Consent = {
    ...consent,
    accessToken: sealConsentToken(deps.cipher, next.accessToken, consent),
    refreshToken: sealConsentToken(deps.cipher, next.refreshToken, consent),
    accessTokenExpiresAt: next.accessTokenExpiresAt.getTime(),
    refreshTokenExpiresAt: next.refreshTokenExpiresAt?.getTime() ?? consent.refreshTokenExpiresAt,
    tokenIssuedAt: next.obtainedAt.getTime(),
  }
  deps.metrics.tokenRefreshes.inc({ outcome: 'ok' })
  deps.unsavedTokens.set(consent.consentId, {
    basedOn: consent.refreshToken,
    fields: {
      accessToken: sealed.accessToken,
      refreshToken: sealed.refreshToken,
      accessTokenExpiresAt: sealed.accessTokenExpiresAt,
      refreshTokenExpiresAt: sealed.refreshTokenExpiresAt,
      tokenIssuedAt: sealed.tokenIssuedAt,
    },
  })
  let written: Consent | null
  try {
    written = await deps.commit({
      consent: sealed,
      bankTransactions: [],
      rawTransactions: [],
      reason: 'TOKEN_REFRESH',
    })
  } catch (err) {
    if (err instanceof PartitionFencedError) throw err
    throw new TokensNotSavedError(err)
  }
  deps.unsavedTokens.delete(consent.consentId)
  if (written === null) return null
  return { consent: written, tokens: { accessToken: next.accessToken, refreshToken: next.refreshToken } }
}

/** A token pair from the code exchange, still inside the bank's freshness window. */
export function hasFreshToken(consent: Consent, now: number, freshTokenMs: number): boolean {
  return (
    consent.grantedAt !== null &&
    consent.tokenIssuedAt !== null &&
    consent.tokenIssuedAt === consent.grantedAt &&
    now - consent.grantedAt < freshTokenMs
  )
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
