import { PipelineError } from '@tep/errors'

/** Root of the errors bank-sync and its consent gateway throw on purpose. */
export class BankSyncError extends PipelineError {}

export type ConsentStateProblem = 'MALFORMED' | 'BAD_SIGNATURE' | 'EXPIRED' | 'REUSED'

/**
 * The `state` of an authorization callback cannot be trusted: not one we signed,
 * expired, or already used. The customer has to start the consent again.
 */
export class ConsentStateError extends BankSyncError {
  readonly problem: ConsentStateProblem

  constructor(problem: ConsentStateProblem, message: string) {
    super(message, { code: `CONSENT_STATE_${problem}`, retriable: false, details: { problem } })
    this.problem = problem
  }
}

/** Configuration that parses but cannot work (e.g. no encryption key for a non-loopback bank). */
export class BankSyncConfigError extends BankSyncError {
  constructor(message: string) {
    super(message, { code: 'BANK_SYNC_CONFIG_INVALID', retriable: false })
  }
}

/**
 * Another instance took this consents partition over (its transactional producer
 * fenced ours): this instance must stop syncing the partition's consents.
 */
export class PartitionFencedError extends BankSyncError {
  constructor(partition: number, cause: unknown) {
    super(
      `bank-sync lost partition ${partition} of the consents topic to another instance (producer fenced); its consents are synced there now`,
      { code: 'CONSENT_PARTITION_FENCED', retriable: false, cause, details: { partition } },
    )
  }
}

/**
 * The bank refused the consent's stored refresh token, but did not say the consent ended
 * (its API still serves the consent's access token, or only says that token expired; or it
 * could not be asked). Most likely a token rotated out by a refresh whose new pair was never
 * written (Kafka outage). The consent is kept and retried, not ended.
 */
export class RefreshTokenRefusedError extends BankSyncError {
  constructor(consentId: string, bankServesConsent: boolean, cause: unknown) {
    super(
      bankServesConsent
        ? `the bank refused the stored refresh token of consent ${consentId} but still serves the consent (a rotated-out token?)`
        : `the bank refused the stored refresh token of consent ${consentId} and could not be asked whether the consent lives`,
      {
        code: 'REFRESH_TOKEN_REFUSED',
        retriable: true,
        cause,
        details: { consentId, bankServesConsent },
      },
    )
  }
}

/**
 * The bank refused a consent's access token with a 401 that does not say the consent ended
 * (no REASON, or one that means neither revoked nor expired), and refused the token issued by
 * a refresh right after it the same way. The consent is kept and paused, never ended: only an
 * explicit signal ends a consent.
 */
export class ConsentPausedUnauthorizedError extends BankSyncError {
  constructor(consentId: string, cause: { reason?: string | undefined; operation?: string }) {
    super(
      `the bank refused consent ${consentId}'s access token with 401 (${cause.reason === undefined ? 'no reason' : `reason ${cause.reason}`}) ` +
        'also right after a token refresh; the consent is kept and paused',
      {
        code: 'CONSENT_PAUSED_UNAUTHORIZED',
        retriable: true,
        cause,
        details: { consentId, reason: cause.reason ?? null, operation: cause.operation ?? null },
      },
    )
  }
}
