/**
 * Reading @platformatic/kafka errors: a failure is often a MultipleErrors (retries)
 * or ResponseError wrapping ProtocolErrors, each with `apiId` (the Kafka error
 * name, e.g. CONCURRENT_TRANSACTIONS) and flags such as `needsRejoin`.
 */
interface ErrorShape {
  apiId?: unknown
  needsRejoin?: unknown
  producerFenced?: unknown
  errors?: unknown
  cause?: unknown
}

function* walk(err: unknown, depth = 0): Generator<ErrorShape> {
  if (typeof err !== 'object' || err === null || depth > 6) return
  const e = err as ErrorShape
  yield e
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* walk(inner, depth + 1)
  yield* walk(e.cause, depth + 1)
}

/** True when `err` or anything it wraps is the Kafka protocol error `apiId`. */
export function hasProtocolError(err: unknown, ...apiIds: string[]): boolean {
  for (const e of walk(err)) if (typeof e.apiId === 'string' && apiIds.includes(e.apiId)) return true
  return false
}

/** The group moved on (rebalance): an offset commit with this generation is refused. */
export function isGenerationError(err: unknown): boolean {
  for (const e of walk(err)) if (e.needsRejoin === true) return true
  return hasProtocolError(err, 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'REBALANCE_IN_PROGRESS', 'FENCED_INSTANCE_ID')
}

/** Another producer with the same transactional id took over: this one can never commit again. */
export function isProducerFenced(err: unknown): boolean {
  for (const e of walk(err)) if (e.producerFenced === true) return true
  return hasProtocolError(err, 'PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED')
}

interface NetworkShape {
  code?: unknown
}

/**
 * A broker that cannot be reached or is not (yet) the leader or coordinator: what a
 * failover looks like to a client, which succeeds once the cluster has moved the
 * leadership. Configuration mistakes (an unknown topic, bad credentials) are not.
 */
export function isFailoverError(err: unknown): boolean {
  for (const e of walk(err)) if ((e as NetworkShape).code === 'PLT_KFK_NETWORK') return true
  return hasProtocolError(
    err,
    'NOT_LEADER_OR_FOLLOWER',
    'LEADER_NOT_AVAILABLE',
    'NOT_COORDINATOR',
    'COORDINATOR_NOT_AVAILABLE',
    'COORDINATOR_LOAD_IN_PROGRESS',
    'REQUEST_TIMED_OUT',
    'NOT_ENOUGH_REPLICAS',
    'FENCED_LEADER_EPOCH',
    'UNKNOWN_LEADER_EPOCH',
    'OFFSET_NOT_AVAILABLE',
  )
}
