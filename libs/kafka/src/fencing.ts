/**
 * Kafka error names that mean "a newer producer with this transactional id
 * exists". KafkaJS 2.2.4 predates the PRODUCER_FENCED code (90), which it
 * reports as an unknown error with that code, so both forms are recognised.
 */
const FENCED_TYPES = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'TRANSACTION_COORDINATOR_FENCED'])
const PRODUCER_FENCED_CODE = 90

interface ErrorShape {
  /** KafkaJS: the Kafka error name. */
  type?: unknown
  /** KafkaJS: the numeric Kafka code; @tep/kafka's ProducerFencedError: 'PRODUCER_FENCED'. */
  code?: unknown
  /** @platformatic/kafka ProtocolError: the Kafka error name. */
  apiId?: unknown
  /** @platformatic/kafka ProtocolError: set for INVALID_PRODUCER_EPOCH (not for PRODUCER_FENCED). */
  producerFenced?: unknown
  cause?: unknown
  /** KafkaJS retry errors. */
  originalError?: unknown
  /** @platformatic/kafka MultipleErrors (retries) and ResponseError (per-partition errors). */
  errors?: unknown
}

/**
 * True when `err` (or an error it wraps: `cause`, KafkaJS `originalError`, the
 * `errors` of a @platformatic/kafka MultipleErrors/ResponseError) says this
 * transactional producer was fenced by a newer one with the same id: the
 * instance must stop, retrying cannot help.
 */
export function isFencedError(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 6) return false
  const e = err as ErrorShape
  if (typeof e.type === 'string' && FENCED_TYPES.has(e.type)) return true
  if (typeof e.apiId === 'string' && FENCED_TYPES.has(e.apiId)) return true
  if (e.code === PRODUCER_FENCED_CODE || e.code === 'PRODUCER_FENCED') return true
  if (e.producerFenced === true) return true
  if (Array.isArray(e.errors) && e.errors.some((inner) => isFencedError(inner, depth + 1))) return true
  return isFencedError(e.cause, depth + 1) || isFencedError(e.originalError, depth + 1)
}
