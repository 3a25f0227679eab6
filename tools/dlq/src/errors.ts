import { PipelineError } from '@tep/errors'

/** Errors of `npm run dlq`; `exitCode` is what the CLI exits with. */
export class DlqToolError extends PipelineError {
  readonly exitCode: number = 1
}

/** Bad options or arguments (exit 2). */
export class DlqOptionsError extends DlqToolError {
  override readonly exitCode = 2
  constructor(message: string) {
    super(message, { code: 'DLQ_OPTIONS_INVALID', retriable: false })
  }
}

/** The cluster or the registry could not be reached or does not hold what was asked for (exit 1); nothing was written. */
export class DlqUnavailableError extends DlqToolError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, { code: 'DLQ_CLUSTER_UNAVAILABLE', retriable: true, ...options })
  }
}

/** The selection names a reason or id the DLQ does not hold, or selects nothing to re-drive (exit 4). */
export class DlqSelectionError extends DlqToolError {
  override readonly exitCode = 4
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'DLQ_SELECTION_EMPTY', retriable: false, details })
  }
}

/** A second re-drive of DLQ records the ledger says were re-driven already, without --force-again (exit 3). */
export class RedriveRefusedError extends DlqToolError {
  override readonly exitCode = 3
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'DLQ_REDRIVE_REFUSED', retriable: false, details })
  }
}

/**
 * A re-drive stopped part-way (broker lost, fenced by a concurrent run): the
 * transactions committed before it hold their records and audit records, the
 * one in flight was aborted. Re-running the same command re-drives the rest.
 */
export class RedriveIncompleteError extends DlqToolError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, { code: 'DLQ_REDRIVE_INCOMPLETE', retriable: true, ...options })
  }
}
