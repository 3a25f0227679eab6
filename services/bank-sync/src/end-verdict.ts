/**
 * Whether a 401 or a refused refresh ends a consent (EXPIRED, REVOKED) or only
 * pauses it (ALIVE, UNANSWERED), and the writes and outcomes of each verdict.
 */
import {
  BankAccessTokenExpiredError,
  BankConsentRevokedError,
  BankUnexplainedUnauthorizedError,
} from '@tep/bank-client'
import { isRetriable } from '@tep/errors'
import type { Consent } from '@tep/schemas'
import { endTokens } from './consent-tokens.ts'
import { RefreshTokenRefusedError } from './errors.ts'
import type { SyncDeps, SyncOutcome } from './sync-deps.ts'

/** Writes the consent's end (its tokens dropped, no transactions); the outcome names the status as written. */
export async function endConsent(
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
export async function endVerdict(
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
export function refreshRefusedConsentKept(
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
