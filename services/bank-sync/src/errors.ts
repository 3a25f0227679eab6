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
