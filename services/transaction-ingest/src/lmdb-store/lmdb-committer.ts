import type { LmdbMerchantTables } from './lmdb-tables.ts'

/** Commits queued before the table reader waits for the oldest: bounds the records held twice (pending and in LMDB's queue). */
const MAX_COMMITS_IN_FLIGHT = 3

/**
 * The TableReader's side of the LMDB store: after each applied batch, the
 * records it applied and the positions they bring the table to are
 * committed (LmdbMerchantTables.commit), without waiting for each commit to
 * be durable unless several are queued; at stop, the last one is waited for
 * and the store closed.
 */
export class LmdbCommitter {
  readonly #tables: LmdbMerchantTables
  readonly #inFlight: Promise<void>[] = []
  /** A batch was applied since the start: only then do the positions (and their time) move at close. */
  #applied = false

  constructor(tables: LmdbMerchantTables) {
    this.#tables = tables
  }

  /** After a batch: commit what was applied with `positions` (a snapshot is taken now). A failed commit throws here, soon after. */
  async afterBatch(positions: ReadonlyMap<string, bigint>): Promise<void> {
    this.#applied = true
    const commit = this.#tables.commit([...positions])
    // Observed now so that a failure is not unhandled; thrown by the await below.
    commit.catch(() => {})
    this.#inFlight.push(commit)
    while (this.#inFlight.length > MAX_COMMITS_IN_FLIGHT) await this.#inFlight.shift()
  }

  /** Commits everything applied (and stamps the positions as current); resolves once durable. */
  async flush(positions: ReadonlyMap<string, bigint>): Promise<void> {
    const last = this.#tables.commit([...positions])
    const earlier = this.#inFlight.splice(0)
    await Promise.all([...earlier, last])
  }

  async close(positions: ReadonlyMap<string, bigint> | undefined): Promise<void> {
    try {
      // Nothing read since the start (e.g. stopped while the store was still being checked): a
      // commit would only stamp old positions as written now, and an old store would pass as fresh.
      if (positions !== undefined && this.#applied) await this.flush(positions)
    } finally {
      await this.#tables.close()
    }
  }
}
