/**
 * Request counters for `/__admin/stats`. Client tests read them to prove
 * behaviour from the server's side: one token request for N concurrent callers,
 * at most K requests in flight, so many retries.
 */
export class Stats {
  total = 0
  readonly byOperation = new Map<string, number>()
  readonly byStatus = new Map<number, number>()
  inFlight = 0
  maxInFlight = 0
  /** Lookup entries resolved (a batch of 500 counts 500). */
  lookups = 0
  /** Sum of `aggCount` reported by transfer lookups (records the client collapsed). */
  aggregatedHits = 0

  started(operation: string): void {
    this.total++
    this.byOperation.set(operation, (this.byOperation.get(operation) ?? 0) + 1)
    this.inFlight++
    if (this.inFlight > this.maxInFlight) this.maxInFlight = this.inFlight
  }

  finished(status: number | undefined): void {
    this.inFlight--
    if (status !== undefined) this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1)
  }

  reset(): void {
    this.total = 0
    this.lookups = 0
    this.aggregatedHits = 0
    this.byOperation.clear()
    this.byStatus.clear()
    // In-flight requests are still running; the maximum restarts from them.
    this.maxInFlight = this.inFlight
  }

  toJSON(): Record<string, unknown> {
    return {
      requests: { total: this.total, byOperation: Object.fromEntries(this.byOperation), byStatus: Object.fromEntries(this.byStatus) },
      tokenRequests: this.byOperation.get('getToken') ?? 0,
      lookups: this.lookups,
      aggregatedHits: this.aggregatedHits,
      concurrency: { current: this.inFlight, max: this.maxInFlight },
    }
  }
}
