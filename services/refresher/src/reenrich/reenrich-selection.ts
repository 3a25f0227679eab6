import type { EnrichedTransaction, RawTransaction } from '@tep/schemas'

/**
 * Decides which enriched transactions to send through enrichment again after
 * their mapping (handle) was invalidated.
 *
 * `transactions.enriched.v1` can hold several results for one transaction (an
 * earlier re-enrichment produced another). Only the latest result per
 * transactionId counts: offer records in topic order (the topic is keyed by
 * transactionId, so one partition's order is the transaction's order).
 * A transaction is selected when its latest result carries an invalidated
 * handle and was produced before that handle's invalidation; one produced
 * after it already reflects the new mapping.
 */
export class ReenrichSelector {
  private readonly targets: ReadonlyMap<string, number>
  private readonly latest = new Map<string, { raw: RawTransaction; handle: string; enrichedAt: number }>()
  private seen = 0

  /** `targets`: invalidated handle → when it was invalidated (epoch ms). */
  constructor(targets: ReadonlyMap<string, number>) {
    this.targets = targets
  }

  offer(enriched: Pick<EnrichedTransaction, 'transactionId' | 'handle' | 'enrichedAt' | 'raw'>): void {
    this.seen += 1
    const handle = enriched.handle
    if (handle !== null && this.targets.has(handle)) {
      this.latest.set(enriched.transactionId, { raw: enriched.raw, handle, enrichedAt: enriched.enrichedAt })
    } else {
      // A later result with another (or no) handle supersedes an earlier match.
      this.latest.delete(enriched.transactionId)
    }
  }

  /** The raw events to republish, each with `refresh` set, and how many were already re-enriched. */
  result(): { republish: RawTransaction[]; alreadyRefreshed: number; scanned: number } {
    const republish: RawTransaction[] = []
    let alreadyRefreshed = 0
    for (const { raw, handle, enrichedAt } of this.latest.values()) {
      if (enrichedAt >= this.targets.get(handle)!) alreadyRefreshed += 1
      else republish.push({ ...raw, refresh: true })
    }
    return { republish, alreadyRefreshed, scanned: this.seen }
  }
}

/** Adds an invalidation of `handle` at `at`, keeping the latest per handle. */
export function addTarget(targets: Map<string, number>, handle: string, at: number): void {
  const previous = targets.get(handle)
  if (previous === undefined || at > previous) targets.set(handle, at)
}
