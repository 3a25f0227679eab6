import { PipelineError } from '@tep/errors'

/**
 * A feed page that cannot be turned into items without guessing: misaligned
 * ids/keys, non-numeric ids, or a cursor that does not move. Publishing such a
 * page could skip or repeat items, so the poller stops on it and retries later.
 */
export class InvalidationFeedFormatError extends PipelineError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'INVALIDATION_FEED_MALFORMED', retriable: false, details })
  }
}

/**
 * The service rejects even the smallest page size. Halving cannot help any
 * more; an operator has to look.
 */
export class InvalidationPageSizeError extends PipelineError {
  constructor(message: string, options: { cause: unknown; details?: Record<string, unknown> }) {
    super(message, {
      code: 'INVALIDATION_PAGE_SIZE_REJECTED',
      retriable: false,
      cause: options.cause,
      details: options.details ?? {},
    })
  }
}

/**
 * Another poller instance with the same transactional id started and fenced
 * this one. By design exactly one poller is active; this one must stop.
 */
export class InvalidationPollerFencedError extends PipelineError {
  constructor(transactionalId: string, cause: unknown) {
    super(
      `invalidation poller with transactional id ${transactionalId} was fenced by a newer instance; ` +
        'exactly one poller may be active per feed, so this instance stops',
      { code: 'INVALIDATION_POLLER_FENCED', retriable: false, cause, details: { transactionalId } },
    )
  }
}

/** The poller was given settings that cannot work (a backoff that shrinks, a page size below the minimum). */
export class InvalidationPollerConfigError extends PipelineError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'INVALIDATION_POLLER_CONFIG_INVALID', retriable: false, details })
  }
}
