import type { InputMessage } from './input-message.ts'

/**
 * A partition's received records not yet started, in offset order. A fetch
 * answer arrives as thousands of records at once and the loop takes them from
 * the front one by one: Array#shift on an array that long moves every element
 * each time (it took most of the loop's CPU when whole answers were queued), so
 * the front is an index and the array is compacted only once most of it is
 * taken.
 */
export class RecordQueue {
  #items: InputMessage[] = []
  #head = 0

  get length(): number {
    return this.#items.length - this.#head
  }

  push(message: InputMessage): void {
    this.#items.push(message)
  }

  /** The oldest record, removed; undefined when empty. */
  shift(): InputMessage | undefined {
    if (this.#head >= this.#items.length) return undefined
    const message = this.#items[this.#head]!
    this.#items[this.#head] = undefined as unknown as InputMessage // the record is not held once taken
    this.#head += 1
    if (this.#head === this.#items.length) this.clear()
    else if (this.#head >= 1_024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
    return message
  }

  clear(): void {
    this.#items = []
    this.#head = 0
  }

  /** Drops the records below `offset` (already committed); returns how many. */
  dropBelow(offset: bigint): number {
    const before = this.length
    this.#items = this.#items.slice(this.#head).filter((m) => m.offset >= offset)
    this.#head = 0
    return before - this.length
  }
}
