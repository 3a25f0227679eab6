/**
 * Kafka error types that mean "a newer producer with this transactional id
 * exists". KafkaJS 2.2.4 predates the PRODUCER_FENCED code (90), which it
 * reports as an unknown error with that code, so both forms are recognised.
 */
const FENCED_TYPES = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'TRANSACTION_COORDINATOR_FENCED'])
const PRODUCER_FENCED_CODE = 90

/**
 * True when `err` (or an error it wraps as `cause` or KafkaJS `originalError`)
 * says this transactional producer was fenced by a newer one with the same id:
 * the instance must stop, retrying cannot help.
 */
export function isFencedError(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 5) return false
  const e = err as { type?: unknown; code?: unknown; cause?: unknown; originalError?: unknown }
  if (typeof e.type === 'string' && FENCED_TYPES.has(e.type)) return true
  if (e.code === PRODUCER_FENCED_CODE) return true
  return isFencedError(e.cause, depth + 1) || isFencedError(e.originalError, depth + 1)
}
