/**
 * A string-keyed map of byte values built to hold millions of entries in little
 * memory: no JS object, string or Buffer per entry.
 *
 * - Keys and values live back to back in an arena of 32 MiB chunks:
 *   `[varint keyLength][key UTF-8][varint valueLength][value]`.
 * - An open-addressing hash index (linear probing) of two Uint32 arrays points
 *   into the arena: `slots` (arena location + 1; 0 empty; 0xFFFFFFFF deleted)
 *   and `hashes` (compared before the key bytes). The arena is therefore limited
 *   to 4 GiB, far above what a table of this kind holds.
 * - Replacing or deleting an entry leaves its old bytes behind as garbage; the
 *   arena is rewritten once garbage exceeds the live bytes (and 16 MiB).
 *
 * Cost per entry: the record bytes plus 8 / load-factor bytes of index
 * (≈ 11-21 bytes at the 0.375-0.75 load this keeps).
 */
// 32 MiB is glibc's largest dynamic mmap threshold on 64-bit: a chunk of this
// size is always its own mmap, never carved out of a malloc arena, so it cannot
// pin the arena pages that the load's freed garbage (fetch buffers) sits in, and
// the pages of its unused tail are never touched (allocUnsafe), so never resident.
const CHUNK_SIZE = 32 * 1024 * 1024
const MIN_CAPACITY = 1024
const MAX_LOAD = 0.75
const COMPACT_MIN_GARBAGE = 16 * 1024 * 1024
const EMPTY = 0
const DELETED = 0xffffffff
const MAX_ARENA = 0xffffffff - 1

export type ValueReader<T> = (chunk: Buffer, offset: number, length: number) => T

/**
 * Everything a CompactTable holds, as plain ArrayBuffers and numbers: it passes
 * between threads (structured clone) and its buffers can be transferred, not copied.
 */
export interface CompactTableState {
  chunks: ArrayBuffer[]
  chunkPos: number
  slots: Uint32Array<ArrayBuffer>
  hashes: Uint32Array<ArrayBuffer>
  size: number
  deleted: number
  liveBytes: number
  garbageBytes: number
}

export class CompactTable {
  /** Size of every arena chunk (a restored state's chunks must have it). */
  static readonly CHUNK_SIZE = CHUNK_SIZE
  #chunks: Buffer[] = []
  #chunkPos = CHUNK_SIZE
  #slots = new Uint32Array(MIN_CAPACITY)
  #hashes = new Uint32Array(MIN_CAPACITY)
  #size = 0
  #deleted = 0
  #liveBytes = 0
  #garbageBytes = 0
  #scratch = Buffer.allocUnsafe(1024)
  #scratchLen = 0

  get size(): number {
    return this.#size
  }

  /**
   * Bytes held: the arena chunks up to the write position of the last one (its
   * tail is reserved address space, never written, so not resident) plus the
   * index arrays.
   */
  get memoryBytes(): number {
    const arena = this.#chunks.length === 0 ? 0 : (this.#chunks.length - 1) * CHUNK_SIZE + this.#chunkPos
    return arena + this.#slots.byteLength + this.#hashes.byteLength
  }

  get liveBytes(): number {
    return this.#liveBytes
  }

  has(key: string): boolean {
    return this.#find(key) >= 0
  }

  /** Reads the value of `key` in place with `read`; undefined when absent. */
  get<T>(key: string, read: ValueReader<T>): T | undefined {
    const slot = this.#find(key)
    if (slot < 0) return undefined
    const location = (this.#slots[slot] as number) - 1
    const chunk = this.#chunks[Math.floor(location / CHUNK_SIZE)] as Buffer
    let pos = location % CHUNK_SIZE
    const keyLen = readVarint(chunk, pos)
    pos += varintSize(keyLen) + keyLen
    const valueLen = readVarint(chunk, pos)
    pos += varintSize(valueLen)
    return read(chunk, pos, valueLen)
  }

  /** Stores `value[0..length)` under `key`, replacing any previous value. */
  set(key: string, value: Buffer, length: number = value.length): void {
    if ((this.#size + this.#deleted + 1) / this.#slots.length > MAX_LOAD) this.#resize()
    this.#store(this.#find(key), key, value, length)
  }

  /**
   * `set` with the key given as its UTF-8 bytes `key[keyStart, keyStart + keyLength)`
   * (the table load: a record's key goes in without becoming a JS string).
   */
  setBytes(key: Buffer, keyStart: number, keyLength: number, value: Buffer, length: number = value.length): void {
    if ((this.#size + this.#deleted + 1) / this.#slots.length > MAX_LOAD) this.#resize()
    if (keyLength > this.#scratch.length) this.#scratch = Buffer.allocUnsafe(Math.max(keyLength, this.#scratch.length * 2))
    const scratch = this.#scratch
    for (let i = 0; i < keyLength; i++) scratch[i] = key[keyStart + i] as number
    this.#store(this.#findScratch(keyLength), undefined, value, length)
  }

  /** Writes the record of the key in the scratch buffer (`#find` put it there) to `slot`, or to a new slot when -1. */
  #store(slot: number, key: string | undefined, value: Buffer, length: number): void {
    const keyLen = this.#scratchLen
    const recordLen = varintSize(keyLen) + keyLen + varintSize(length) + length
    if (recordLen > CHUNK_SIZE)
      throw new RangeError(
        `table entry ${key ?? this.#scratch.toString('utf8', 0, keyLen)} is ${recordLen} bytes, above the ${CHUNK_SIZE}-byte chunk size`,
      )
    if (this.#chunkPos + recordLen > CHUNK_SIZE) {
      if ((this.#chunks.length + 1) * CHUNK_SIZE > MAX_ARENA)
        throw new RangeError('table arena is full (4 GiB)')
      this.#chunks.push(Buffer.allocUnsafe(CHUNK_SIZE))
      this.#chunkPos = 0
    }
    const chunkIndex = this.#chunks.length - 1
    const chunk = this.#chunks[chunkIndex] as Buffer
    let pos = this.#chunkPos
    pos = writeVarint(chunk, pos, keyLen)
    copyBytes(this.#scratch, 0, keyLen, chunk, pos)
    pos += keyLen
    pos = writeVarint(chunk, pos, length)
    copyBytes(value, 0, length, chunk, pos)
    const location = chunkIndex * CHUNK_SIZE + this.#chunkPos
    this.#chunkPos += recordLen
    this.#liveBytes += recordLen

    if (slot >= 0) {
      const old = this.#recordLength((this.#slots[slot] as number) - 1)
      this.#liveBytes -= old
      this.#garbageBytes += old
      this.#slots[slot] = location + 1
    } else {
      const target = this.#insertionSlot(this.#lastHash)
      if (this.#slots[target] === DELETED) this.#deleted--
      this.#slots[target] = location + 1
      this.#hashes[target] = this.#lastHash
      this.#size++
    }
    this.#maybeCompact()
  }

  delete(key: string): boolean {
    const slot = this.#find(key)
    if (slot < 0) return false
    const old = this.#recordLength((this.#slots[slot] as number) - 1)
    this.#liveBytes -= old
    this.#garbageBytes += old
    this.#slots[slot] = DELETED
    this.#size--
    this.#deleted++
    this.#maybeCompact()
    return true
  }

  clear(): void {
    this.#chunks = []
    this.#chunkPos = CHUNK_SIZE
    this.#slots = new Uint32Array(MIN_CAPACITY)
    this.#hashes = new Uint32Array(MIN_CAPACITY)
    this.#size = 0
    this.#deleted = 0
    this.#liveBytes = 0
    this.#garbageBytes = 0
  }

  /**
   * Hands the table's memory over (to another thread or process) and leaves
   * this table empty. Each chunk owns its whole ArrayBuffer (chunk-sized allocations
   * never come from Node's shared Buffer pool), so nothing else travels along.
   */
  exportState(): CompactTableState {
    const state = this.peekState()
    this.clear()
    return state
  }

  /**
   * The table's memory as a state, without handing it over: valid only until
   * the next change (a checkpoint writes it while nothing changes the table).
   */
  peekState(): CompactTableState {
    return {
      chunks: this.#chunks.map((c) => {
        if (c.byteOffset !== 0 || c.byteLength !== c.buffer.byteLength)
          throw new Error('a table chunk does not own its ArrayBuffer; it cannot be transferred')
        return c.buffer as ArrayBuffer
      }),
      chunkPos: this.#chunkPos,
      slots: this.#slots,
      hashes: this.#hashes,
      size: this.#size,
      deleted: this.#deleted,
      liveBytes: this.#liveBytes,
      garbageBytes: this.#garbageBytes,
    }
  }

  /**
   * Replaces the contents with a state produced by `exportState` (of this code
   * version). `owned`: the index arrays were made for this table (read from a
   * checkpoint, or from the loader's hand-over FIFO into exactly sized
   * buffers) and are adopted instead of copied.
   */
  restoreState(state: CompactTableState, owned = false): void {
    const capacity = state.slots.length
    if (capacity < MIN_CAPACITY || (capacity & (capacity - 1)) !== 0 || state.hashes.length !== capacity)
      throw new RangeError(`table state has an invalid index capacity ${capacity}`)
    if (state.chunks.some((c) => c.byteLength !== CHUNK_SIZE))
      throw new RangeError(`table state has a chunk that is not ${CHUNK_SIZE} bytes`)
    this.#chunks = state.chunks.map((c) => Buffer.from(c))
    this.#chunkPos = state.chunkPos
    // Copied, not adopted: a buffer that arrived in a message may be a view
    // into a larger receive buffer, or sit in another thread's malloc arena and
    // pin the pages of everything that thread freed.
    this.#slots = owned ? state.slots : new Uint32Array(state.slots)
    this.#hashes = owned ? state.hashes : new Uint32Array(state.hashes)
    this.#size = state.size
    this.#deleted = state.deleted
    this.#liveBytes = state.liveBytes
    this.#garbageBytes = state.garbageBytes
  }

  /** The ArrayBuffers of a state, to list as the transfer list of a postMessage. */
  static transferables(state: CompactTableState): ArrayBuffer[] {
    return [...state.chunks, state.slots.buffer, state.hashes.buffer]
  }

  *keys(): IterableIterator<string> {
    for (let i = 0; i < this.#slots.length; i++) {
      const s = this.#slots[i] as number
      if (s !== EMPTY && s !== DELETED) yield this.#keyAt(s - 1)
    }
  }

  #lastHash = 0

  /** Puts `key` into the scratch buffer, hashes it, and returns its slot or -1. */
  #find(key: string): number {
    const maxBytes = key.length * 3
    if (maxBytes > this.#scratch.length)
      this.#scratch = Buffer.allocUnsafe(Math.max(maxBytes, this.#scratch.length * 2))
    return this.#findScratch(this.#scratch.write(key, 0, 'utf8'))
  }

  /** `#find` of the key whose `len` UTF-8 bytes are in the scratch buffer. */
  #findScratch(len: number): number {
    this.#scratchLen = len
    const h = fnv1a(this.#scratch, len)
    this.#lastHash = h
    const mask = this.#slots.length - 1
    let i = h & mask
    for (;;) {
      const s = this.#slots[i] as number
      if (s === EMPTY) return -1
      if (s !== DELETED && this.#hashes[i] === h && this.#keyEquals(s - 1, len)) return i
      i = (i + 1) & mask
    }
  }

  #insertionSlot(h: number): number {
    const mask = this.#slots.length - 1
    let i = h & mask
    for (;;) {
      const s = this.#slots[i] as number
      if (s === EMPTY || s === DELETED) return i
      i = (i + 1) & mask
    }
  }

  #keyEquals(location: number, len: number): boolean {
    const chunk = this.#chunks[Math.floor(location / CHUNK_SIZE)] as Buffer
    const pos = location % CHUNK_SIZE
    const keyLen = readVarint(chunk, pos)
    if (keyLen !== len) return false
    const start = pos + varintSize(keyLen)
    // A uid is a few dozen bytes: a loop costs less than Buffer.compare's native call.
    if (len <= 64) {
      const scratch = this.#scratch
      for (let i = 0; i < len; i++) if (scratch[i] !== chunk[start + i]) return false
      return true
    }
    return this.#scratch.compare(chunk, start, start + len, 0, len) === 0
  }

  #keyAt(location: number): string {
    const chunk = this.#chunks[Math.floor(location / CHUNK_SIZE)] as Buffer
    const pos = location % CHUNK_SIZE
    const keyLen = readVarint(chunk, pos)
    const start = pos + varintSize(keyLen)
    return chunk.toString('utf8', start, start + keyLen)
  }

  #recordLength(location: number): number {
    const chunk = this.#chunks[Math.floor(location / CHUNK_SIZE)] as Buffer
    let pos = location % CHUNK_SIZE
    const keyLen = readVarint(chunk, pos)
    pos += varintSize(keyLen) + keyLen
    const valueLen = readVarint(chunk, pos)
    return varintSize(keyLen) + keyLen + varintSize(valueLen) + valueLen
  }

  /** Rebuilds the index at a size where the live entries fill at most half of it. */
  #resize(): void {
    let capacity = MIN_CAPACITY
    while ((this.#size + 1) * 2 > capacity) capacity *= 2
    const oldSlots = this.#slots
    const oldHashes = this.#hashes
    this.#slots = new Uint32Array(capacity)
    this.#hashes = new Uint32Array(capacity)
    this.#deleted = 0
    const mask = capacity - 1
    for (let i = 0; i < oldSlots.length; i++) {
      const s = oldSlots[i] as number
      if (s === EMPTY || s === DELETED) continue
      const h = oldHashes[i] as number
      let j = h & mask
      while (this.#slots[j] !== EMPTY) j = (j + 1) & mask
      this.#slots[j] = s
      this.#hashes[j] = h
    }
  }

  /** Copies the live records into fresh chunks once garbage dominates the arena. */
  #maybeCompact(): void {
    if (this.#garbageBytes < COMPACT_MIN_GARBAGE || this.#garbageBytes < this.#liveBytes) return
    const oldChunks = this.#chunks
    this.#chunks = []
    this.#chunkPos = CHUNK_SIZE
    for (let i = 0; i < this.#slots.length; i++) {
      const s = this.#slots[i] as number
      if (s === EMPTY || s === DELETED) continue
      const location = s - 1
      const chunk = oldChunks[Math.floor(location / CHUNK_SIZE)] as Buffer
      const start = location % CHUNK_SIZE
      const len = recordLengthIn(chunk, start)
      if (this.#chunkPos + len > CHUNK_SIZE) {
        this.#chunks.push(Buffer.allocUnsafe(CHUNK_SIZE))
        this.#chunkPos = 0
      }
      const target = this.#chunks[this.#chunks.length - 1] as Buffer
      chunk.copy(target, this.#chunkPos, start, start + len)
      this.#slots[i] = (this.#chunks.length - 1) * CHUNK_SIZE + this.#chunkPos + 1
      this.#chunkPos += len
    }
    this.#garbageBytes = 0
  }
}

/**
 * Buffer#copy makes a view object per call (Node 24's _copyActual): for the
 * short keys and values of a table entry a loop is cheaper.
 */
function copyBytes(src: Buffer, start: number, length: number, target: Buffer, at: number): void {
  if (length > 256) {
    src.copy(target, at, start, start + length)
    return
  }
  for (let i = 0; i < length; i++) target[at + i] = src[start + i] as number
}

function recordLengthIn(chunk: Buffer, start: number): number {
  let pos = start
  const keyLen = readVarint(chunk, pos)
  pos += varintSize(keyLen) + keyLen
  const valueLen = readVarint(chunk, pos)
  return pos + varintSize(valueLen) + valueLen - start
}

function fnv1a(buf: Buffer, len: number): number {
  let h = 0x811c9dc5
  for (let i = 0; i < len; i++) {
    h ^= buf[i] as number
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

function varintSize(value: number): number {
  let size = 1
  let v = value
  while (v >= 0x80) {
    v = Math.floor(v / 0x80)
    size++
  }
  return size
}

function writeVarint(buf: Buffer, pos: number, value: number): number {
  let v = value
  let p = pos
  while (v >= 0x80) {
    buf[p++] = (v % 0x80) | 0x80
    v = Math.floor(v / 0x80)
  }
  buf[p++] = v
  return p
}

function readVarint(buf: Buffer, pos: number): number {
  let result = 0
  let factor = 1
  let p = pos
  for (;;) {
    const b = buf[p++] as number
    result += (b & 0x7f) * factor
    if (b < 0x80) return result
    factor *= 0x80
  }
}
