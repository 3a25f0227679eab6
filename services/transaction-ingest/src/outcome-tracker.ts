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

export class OutcomeTracker {
  readonly #pending = new Map<string, Map<string, NotedResult>>()

  note(topic: string, partition: number, offset: string, result: NotedResult): void {
    const key = `${topic}:${partition}`
    let byOffset = this.#pending.get(key)
    if (byOffset === undefined) {
      byOffset = new Map()
      this.#pending.set(key, byOffset)
    }
    byOffset.set(offset, result)
  }

  /** Everything noted for the partition at or below `lastOffset` is committed: returns its counts. */
  committed(topic: string, partition: number, lastOffset: string): CommittedCounts {
    const counts: CommittedCounts = { byStatus: new Map(), fetchedShops: 0, fetchedMerchants: 0 }
    const byOffset = this.#pending.get(`${topic}:${partition}`)
    if (byOffset === undefined) return counts
    const last = BigInt(lastOffset)
    for (const [offset, result] of byOffset) {
      if (BigInt(offset) > last) continue
      counts.byStatus.set(result.status, (counts.byStatus.get(result.status) ?? 0) + 1)
      counts.fetchedShops += result.fetchedShops
      counts.fetchedMerchants += result.fetchedMerchants
      byOffset.delete(offset)
    }
    return counts
  }

  /** Forgets partitions this instance no longer owns (their results are someone else's now). */
  retain(owned: ReadonlyArray<{ topic: string; partition: number }>): void {
    const keep = new Set(owned.map((tp) => `${tp.topic}:${tp.partition}`))
    for (const key of this.#pending.keys()) if (!keep.has(key)) this.#pending.delete(key)
  }
}
