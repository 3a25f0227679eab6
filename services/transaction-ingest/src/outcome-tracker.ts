import type { EnrichmentStatus } from '@tep/schemas'

/**
 * Counts results by outcome only once their Kafka transaction committed, so the
 * metric agrees with what read-committed consumers see even when a batch is
 * aborted and redone. The transform notes each record's status by position;
 * a commit of a partition up to an offset counts and forgets what it covers.
 */
export interface NotedResult {
  status: EnrichmentStatus
  /** MerchantDataFetched records written with the result, by entity type. */
  fetchedShops: number
  fetchedMerchants: number
}

export interface CommittedCounts {
  byStatus: Map<EnrichmentStatus, number>
  fetchedShops: number
  fetchedMerchants: number
}

const STATUSES: readonly EnrichmentStatus[] = ['MATCHED', 'NOT_FOUND', 'REJECTED']
/** A noted result packed into one number (noted for every record: no object each). */
const FETCHED_LIMIT = 1 << 12

function pack(result: NotedResult): number {
  const status = STATUSES.indexOf(result.status)
  if (status < 0 || result.fetchedShops >= FETCHED_LIMIT || result.fetchedMerchants >= FETCHED_LIMIT)
    throw new RangeError(`cannot note result ${JSON.stringify(result)}`)
  return status + 4 * result.fetchedShops + 4 * FETCHED_LIMIT * result.fetchedMerchants
}

export class OutcomeTracker {
  /** `${topic}:${partition}` → offset → packed result. */
  readonly #pending = new Map<string, Map<number, number>>()
  /** The last partition noted and its map: records come in runs of one partition. */
  #lastTopic = ''
  #lastPartition = -1
  #last: Map<number, number> | undefined

  note(topic: string, partition: number, offset: string, result: NotedResult): void {
    let byOffset = this.#last
    if (byOffset === undefined || partition !== this.#lastPartition || topic !== this.#lastTopic) {
      const key = `${topic}:${partition}`
      byOffset = this.#pending.get(key)
      if (byOffset === undefined) {
        byOffset = new Map()
        this.#pending.set(key, byOffset)
      }
      this.#last = byOffset
      this.#lastTopic = topic
      this.#lastPartition = partition
    }
    // Offsets stay far below 2^53: a number is an exact key.
    byOffset.set(Number(offset), pack(result))
  }

  /** Everything noted for the partition at or below `lastOffset` is committed: returns its counts. */
  committed(topic: string, partition: number, lastOffset: string): CommittedCounts {
    const counts: CommittedCounts = { byStatus: new Map(), fetchedShops: 0, fetchedMerchants: 0 }
    const byOffset = this.#pending.get(`${topic}:${partition}`)
    if (byOffset === undefined) return counts
    const last = Number(lastOffset)
    const byStatus = [0, 0, 0]
    for (const [offset, packed] of byOffset) {
      if (offset > last) continue
      byStatus[packed & 3]! += 1
      counts.fetchedShops += Math.floor(packed / 4) % FETCHED_LIMIT
      counts.fetchedMerchants += Math.floor(packed / (4 * FETCHED_LIMIT))
      byOffset.delete(offset)
    }
    for (let i = 0; i < STATUSES.length; i++) if (byStatus[i]! > 0) counts.byStatus.set(STATUSES[i]!, byStatus[i]!)
    return counts
  }

  /** Forgets partitions this instance no longer owns (their results are someone else's now). */
  retain(owned: ReadonlyArray<{ topic: string; partition: number }>): void {
    const keep = new Set(owned.map((tp) => `${tp.topic}:${tp.partition}`))
    for (const key of this.#pending.keys()) if (!keep.has(key)) this.#pending.delete(key)
    this.#last = undefined
  }
}
