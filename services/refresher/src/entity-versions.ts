/**
 * The refresher's view of what the compacted topics hold: per entity key the
 * version (fetchedAt of the snapshot, or the time of the tombstone) and whether
 * it is a tombstone. It is what "keep the newest version" is decided against.
 *
 * Three sources feed it:
 * - `observeCommitted`: records read back from the compacted topics (read
 *   committed), at start-up and continuously afterwards. The last record of a
 *   key is the truth.
 * - `recordWrite`: what this instance just produced. Until the tail reads it
 *   back it is "pending", so that the next batch already sees it; a pending
 *   entry that never shows up (its transaction aborted) expires after
 *   `pendingTtlMs` instead of shadowing the truth forever.
 * - `markInvalidated`: an invalidation for a key the table does not hold. Nothing
 *   is fetched for it, but a snapshot fetched before that moment (an ingest miss
 *   still in flight) must not be written afterwards.
 */
export interface VersionEntry {
  version: number
  deleted: boolean
}

export interface EntityVersionsOptions {
  pendingTtlMs?: number
  /** Bound on remembered invalidations of unknown keys (oldest forgotten first). */
  maxInvalidatedUnknown?: number
}

export class EntityVersions {
  private readonly committed = new Map<string, VersionEntry>()
  private readonly pending = new Map<string, VersionEntry & { at: number }>()
  private readonly invalidatedUnknown = new Map<string, number>()
  private readonly pendingTtlMs: number
  private readonly maxInvalidatedUnknown: number

  constructor(options: EntityVersionsOptions = {}) {
    this.pendingTtlMs = options.pendingTtlMs ?? 5 * 60_000
    this.maxInvalidatedUnknown = options.maxInvalidatedUnknown ?? 100_000
  }

  private liveEntries = 0

  /** Number of keys the compacted topic holds (tombstones excluded), as read back. */
  get liveCount(): number {
    return this.liveEntries
  }

  /**
   * A record read back from the compacted topic. The refresher is its only
   * writer and decided newest-wins before writing, so the last record of a key
   * is the table's state, whatever its version says (a tombstone stamped by a
   * clock behind the snapshot's fetcher still deletes it).
   */
  observeCommitted(key: string, entry: VersionEntry): void {
    const current = this.committed.get(key)
    this.committed.set(key, entry)
    this.liveEntries += (entry.deleted ? 0 : 1) - (current === undefined || current.deleted ? 0 : 1)
    const pending = this.pending.get(key)
    if (pending !== undefined && entry.version >= pending.version) this.pending.delete(key)
  }

  recordWrite(key: string, entry: VersionEntry, now: number): void {
    this.pending.set(key, { ...entry, at: now })
    this.invalidatedUnknown.delete(key)
  }

  /** The newest of what is committed and what this instance wrote recently. */
  get(key: string, now: number): VersionEntry | undefined {
    const committed = this.committed.get(key)
    const pending = this.pending.get(key)
    if (pending !== undefined && now - pending.at > this.pendingTtlMs) {
      this.pending.delete(key)
      return committed
    }
    if (pending === undefined) return committed
    if (committed === undefined || pending.version > committed.version)
      return { version: pending.version, deleted: pending.deleted }
    return committed
  }

  /** True when the table holds a live (non-tombstone) snapshot for `key`. */
  isLive(key: string, now: number): boolean {
    const entry = this.get(key, now)
    return entry !== undefined && !entry.deleted
  }

  markInvalidated(key: string, at: number): void {
    const previous = this.invalidatedUnknown.get(key)
    if (previous !== undefined && previous >= at) return
    this.invalidatedUnknown.delete(key)
    this.invalidatedUnknown.set(key, at)
    if (this.invalidatedUnknown.size > this.maxInvalidatedUnknown) {
      const oldest = this.invalidatedUnknown.keys().next()
      if (!oldest.done) this.invalidatedUnknown.delete(oldest.value)
    }
  }

  /** Snapshots older than this must not be written: the table's version, or an invalidation of an unknown key. */
  floor(key: string, now: number): number | undefined {
    const entry = this.get(key, now)
    const invalidated = this.invalidatedUnknown.get(key)
    if (entry === undefined) return invalidated
    if (invalidated === undefined) return entry.version
    return Math.max(entry.version, invalidated)
  }

  /** Live entries with their effective version (own recent writes included), for the sweep. */
  *live(now: number): IterableIterator<[string, number]> {
    for (const key of this.committed.keys()) {
      const e = this.get(key, now)
      if (e !== undefined && !e.deleted) yield [key, e.version]
    }
    for (const [key, e] of this.pending) {
      if (!this.committed.has(key) && !e.deleted && now - e.at <= this.pendingTtlMs) yield [key, e.version]
    }
  }
}
