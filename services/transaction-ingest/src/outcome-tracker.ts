import type { EnrichmentStatus } from '@tep/schemas'

/**
 * Counts results by outcome only once their Kafka transaction committed, so the
 * metric agrees with what read-committed consumers see even when a batch is
 * aborted and redone. The transform notes each record's status by position;
 * a commit of a partition up to an offset counts and forgets what it covers.
 *
 * This runs once per record on the ingest's hot path, so a noted result is one
 * number (status and the two counts packed), keyed by the offset as a number
 * (exact below 2^53, centuries of records at any rate) in a map per partition.
 */
export interface CommittedCounts {
  byStatus: Map<EnrichmentStatus, number>
  fetchedShops: number
  fetchedMerchants: number
}

const STATUSES: readonly EnrichmentStatus[] = ['MATCHED', 'NOT_FOUND', 'REJECTED']
const STATUS_INDEX = new Map(STATUSES.map((s, i) => [s, i]))
/** A noted result as one number: status index + 4 × shops + 4 × 65,536 × merchants (a record fetches at most one of each). */
const STATUS_SLOTS = 4
const COUNT_SLOTS = 0x10000

function pack(status: EnrichmentStatus, shops: number, merchants: number): number {
  const count = (n: number) => Math.min(n, COUNT_SLOTS - 1)
  return STATUS_INDEX.get(status)! + STATUS_SLOTS * (count(shops) + COUNT_SLOTS * count(merchants))
}

function unpack(packed: number): { status: EnrichmentStatus; shops: number; merchants: number } {
  const counts = Math.floor(packed / STATUS_SLOTS)
  return { status: STATUSES[packed % STATUS_SLOTS]!, shops: counts % COUNT_SLOTS, merchants: Math.floor(counts / COUNT_SLOTS) }
}

export class OutcomeTracker {
  readonly #pending = new Map<string, (Map<number, number> | undefined)[]>()

  note(topic: string, partition: number, offset: string, status: EnrichmentStatus, fetchedShops: number, fetchedMerchants: number): void {
    let partitions = this.#pending.get(topic)
    if (partitions === undefined) {
      partitions = []
      this.#pending.set(topic, partitions)
    }
    const byOffset = (partitions[partition] ??= new Map())
    byOffset.set(Number(offset), pack(status, fetchedShops, fetchedMerchants))
  }

  /** Everything noted for the partition at or below `lastOffset` is committed: returns its counts. */
  committed(topic: string, partition: number, lastOffset: string): CommittedCounts {
    const counts: CommittedCounts = { byStatus: new Map(), fetchedShops: 0, fetchedMerchants: 0 }
    const byOffset = this.#pending.get(topic)?.[partition]
    if (byOffset === undefined) return counts
    const last = Number(lastOffset)
    for (const [offset, packed] of byOffset) {
      if (offset > last) continue
      // Once per record per commit, off the transform's path: an object here is cheap.
      const { status, shops, merchants } = unpack(packed)
      counts.byStatus.set(status, (counts.byStatus.get(status) ?? 0) + 1)
      counts.fetchedShops += shops
      counts.fetchedMerchants += merchants
      byOffset.delete(offset)
    }
    return counts
  }

  /** Forgets partitions this instance no longer owns (their results are someone else's now). */
  retain(owned: ReadonlyArray<{ topic: string; partition: number }>): void {
    for (const [topic, partitions] of this.#pending)
      for (let p = 0; p < partitions.length; p++)
        if (partitions[p] !== undefined && !owned.some((tp) => tp.topic === topic && tp.partition === p)) partitions[p] = undefined
  }
}
