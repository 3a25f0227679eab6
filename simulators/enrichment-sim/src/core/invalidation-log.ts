/** What an invalidation item is about. */
export const LEVELS = ['shop', 'merchant', 'handle'] as const
export type Level = (typeof LEVELS)[number]
export type ChangeType = 'update' | 'delete' | 'remap'

export interface InvalidationItem {
  id: number
  level: Level
  type: ChangeType
  /** Shop uid, merchant uid or handle. */
  key: string
  /** Simulator time of the change, epoch ms. */
  at: number
}

export interface InvalidationBatch {
  level: Level
  type: ChangeType
  ids: number[]
  keys: string[]
}

export interface PageRequest {
  fromId: number
  toId?: number
  levels: ReadonlySet<Level>
  pageSize: number
}

export interface Page {
  batches: InvalidationBatch[]
  paging: { fromId: number; toId: number | null; pageSize: number; lastId: number; hasMore: boolean }
}

/**
 * The append-only invalidation feed. Item ids are 1, 2, 3, ... without gaps, so
 * an id is also a position and a page is a slice; timestamps never go backwards
 * even when the simulator clock is set back.
 */
export class InvalidationLog {
  #items: InvalidationItem[] = []

  get lastId(): number {
    return this.#items.length
  }

  append(level: Level, type: ChangeType, key: string, now: number): InvalidationItem {
    const previous = this.#items[this.#items.length - 1]
    const item: InvalidationItem = { id: this.#items.length + 1, level, type, key, at: Math.max(now, previous?.at ?? now) }
    this.#items.push(item)
    return item
  }

  clear(): void {
    this.#items = []
  }

  /**
   * Items with fromId < id <= toId whose level is requested, at most pageSize,
   * grouped into runs of the same level and type. `lastId` is the cursor for the
   * next call: the last item returned while more follow, otherwise the highest id
   * examined, so that a filtered-out tail is not scanned again.
   */
  page(request: PageRequest): Page {
    const upper = Math.min(request.toId ?? Number.POSITIVE_INFINITY, this.lastId)
    const batches: InvalidationBatch[] = []
    let returned = 0
    let lastReturned = request.fromId
    let id = request.fromId + 1
    for (; id <= upper && returned < request.pageSize; id++) {
      const item = this.#items[id - 1] as InvalidationItem
      if (!request.levels.has(item.level)) continue
      const current = batches[batches.length - 1]
      if (current !== undefined && current.level === item.level && current.type === item.type) {
        current.ids.push(item.id)
        current.keys.push(item.key)
      } else {
        batches.push({ level: item.level, type: item.type, ids: [item.id], keys: [item.key] })
      }
      returned++
      lastReturned = item.id
    }
    let hasMore = false
    for (let next = id; next <= upper; next++) {
      if (request.levels.has((this.#items[next - 1] as InvalidationItem).level)) {
        hasMore = true
        break
      }
    }
    const lastId = hasMore ? lastReturned : Math.max(request.fromId, upper)
    return { batches, paging: { fromId: request.fromId, toId: request.toId ?? null, pageSize: request.pageSize, lastId, hasMore } }
  }

  /** The id just before the first item at or after `moment` (an exclusive cursor), and the newest id. */
  rangeFrom(moment: number): { fromId: number; toId: number } {
    let lo = 0
    let hi = this.#items.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.#items[mid] as InvalidationItem).at < moment) lo = mid + 1
      else hi = mid
    }
    return { fromId: lo, toId: this.lastId }
  }
}
