/**
 * How the table loader process hands its tables' bytes to the service: framed
 * through a FIFO the parent made, not through files or a stream.
 *
 * Why streamed, and while the load runs: on the machines this runs on, the
 * first write to a fresh page costs far more than the copy itself (~12 us per
 * 4 KiB page measured, 2.5 s per 800 MB). Spool files made every byte of the
 * table fresh memory three times over (the loader's arena, the files, the
 * service's buffers), all after the load. Now each 32 MiB arena chunk goes
 * over as soon as it is full, while the loader fills the next one, and lands
 * straight in the service's own buffer; at the end only the last chunk, the
 * index arrays and the string pools are left to send.
 *
 * Why a FIFO with blocking reads and writes on libuv's thread pool: a socket
 * stream writes only when the loader's event loop turns (once per fetch in a
 * CPU-bound load: the transfer crawled at a few MB/s), and reads into a fresh
 * 64 KiB buffer each time, whose freed memory stayed in the service's malloc
 * heap (+37 MB RSS at 1M shops). Here each side moves bytes on its own thread,
 * and the service reads into the destination buffers themselves.
 *
 * A frame is a 12-byte header (kind u8, table u8, 2 bytes zero, index u32 LE,
 * length u32 LE) and `length` bytes; an End frame closes the hand-over. A
 * chunk may come again under the same index (the loader compacted its arena
 * and refilled it): the later bytes win, and the `loaded` message says how
 * many chunks each table has in the end.
 */
import { read, write } from 'node:fs'
import { CompactTable, type CompactTableState } from './compact-table.ts'
import { TableLoadError } from './errors.ts'

const HEADER = 12
/** Frame kinds. */
const Kind = { Chunk: 1, Slots: 2, Hashes: 3, Pools: 4, End: 5 } as const
type Kind = (typeof Kind)[keyof typeof Kind]
export const TABLES = ['shops', 'merchants'] as const
export type TableName = (typeof TABLES)[number]

/** The loader's side: sends chunks as they fill, then the rest of the state, then End. */
export class HandoverSender {
  readonly #fd: number
  /** Per table, the chunk buffer last sent at each index (a compaction replaces them). */
  readonly #sent: Record<TableName, ArrayBuffer[]> = { shops: [], merchants: [] }
  /** The writes in order, one after the other; rejected once one failed. */
  #written: Promise<void> = Promise.resolve()

  /** `fd`: the FIFO opened for writing (blocking), or any file. */
  constructor(fd: number) {
    this.#fd = fd
  }

  /** Sends the chunks of `state` that are full (all but the last) and not sent as they are now. */
  sendFull(table: TableName, state: CompactTableState): void {
    for (let i = 0; i < state.chunks.length - 1; i++) this.#sendChunk(table, i, state.chunks[i] as ArrayBuffer, CompactTable.CHUNK_SIZE)
  }

  /** Everything not sent yet: the last chunk up to where it was written, then the index arrays. */
  sendRest(table: TableName, state: CompactTableState): void {
    this.sendFull(table, state)
    const last = state.chunks.length - 1
    if (last >= 0) this.#sendChunk(table, last, state.chunks[last] as ArrayBuffer, state.chunkPos, true)
    this.#frame(Kind.Slots, table, 0, new Uint8Array(state.slots.buffer, state.slots.byteOffset, state.slots.byteLength))
    this.#frame(Kind.Hashes, table, 0, new Uint8Array(state.hashes.buffer, state.hashes.byteOffset, state.hashes.byteLength))
  }

  sendPools(pools: Record<string, string[]>): void {
    this.#frame(Kind.Pools, 'shops', 0, Buffer.from(JSON.stringify(pools)))
  }

  /** Sends End; resolves once everything has been written (rejects with the first failed write). */
  end(): Promise<void> {
    this.#frame(Kind.End, 'shops', 0, new Uint8Array(0))
    return this.#written
  }

  #sendChunk(table: TableName, index: number, chunk: ArrayBuffer, length: number, always = false): void {
    if (!always && this.#sent[table][index] === chunk) return
    this.#sent[table][index] = chunk
    this.#frame(Kind.Chunk, table, index, new Uint8Array(chunk, 0, length))
  }

  #frame(kind: Kind, table: TableName, index: number, bytes: Uint8Array): void {
    const header = Buffer.alloc(HEADER)
    header.writeUInt8(kind, 0)
    header.writeUInt8(TABLES.indexOf(table), 1)
    header.writeUInt32LE(index, 4)
    header.writeUInt32LE(bytes.byteLength, 8)
    // No copy: written from the chunk itself, which is full and never written again.
    this.#written = this.#written.then(() => writeAll(this.#fd, header)).then(() => writeAll(this.#fd, bytes))
    // Seen by end(); not an unhandled rejection meanwhile.
    this.#written.catch(() => {})
  }
}

async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  for (let done = 0; done < bytes.byteLength; ) {
    done += await new Promise<number>((resolve, reject) =>
      write(fd, bytes, done, bytes.byteLength - done, null, (err, n) => (err ? reject(err) : resolve(n))),
    )
  }
}

/** The service's side: reads each frame's bytes straight into the buffer the tables will own. */
export class HandoverReceiver {
  readonly #chunks: Record<TableName, ArrayBuffer[]> = { shops: [], merchants: [] }
  readonly #slots: Partial<Record<TableName, ArrayBuffer>> = {}
  readonly #hashes: Partial<Record<TableName, ArrayBuffer>> = {}
  #pools: Uint8Array | undefined
  readonly #header = Buffer.alloc(HEADER)
  #headerFill = 0
  #target: Uint8Array | undefined
  #targetPos = 0
  #ended = false
  /** Bytes received, for the log. */
  bytes = 0

  /**
   * Reads frames from `fd` (blocking reads on libuv's thread pool) until the
   * End frame; rejects on a read error, on frames it cannot take, and when the
   * writer closed before End.
   */
  async readFrom(fd: number): Promise<void> {
    while (!this.#ended) {
      const view = this.#next()
      const n = await new Promise<number>((resolve, reject) =>
        read(fd, view, 0, view.byteLength, null, (err, bytes) => (err ? reject(err) : resolve(bytes))),
      )
      if (n === 0) throw new TableLoadError('the table loader process ended inside its hand-over')
      this.#advance(n)
    }
  }

  /** Whether the End frame came. */
  get ended(): boolean {
    return this.#ended
  }

  /** Where the next bytes go: the rest of a header, or the rest of a frame's destination. */
  #next(): Uint8Array {
    if (this.#target === undefined) return this.#header.subarray(this.#headerFill)
    return this.#target.subarray(this.#targetPos)
  }

  #advance(n: number): void {
    this.bytes += n
    if (this.#target === undefined) {
      this.#headerFill += n
      if (this.#headerFill === HEADER) this.#startFrame()
      return
    }
    this.#targetPos += n
    if (this.#targetPos === this.#target.length) this.#target = undefined
  }

  /** The buffers of the state the `loaded` message describes, as they came through the FIFO. */
  complete(state: HandoverState): Record<TableName, TableBuffers> & { pools: Record<string, string[]> } {
    if (!this.#ended) throw new TableLoadError('the table loader process ended inside its hand-over')
    const tables: Partial<Record<TableName, TableBuffers>> = {}
    for (const table of TABLES) {
      const count = state.chunkCounts[table]
      const chunks = this.#chunks[table].slice(0, count)
      if (chunks.length !== count || chunks.some((c) => c === undefined))
        throw new TableLoadError(`the table loader handed over ${chunks.filter(Boolean).length} of the ${count} arena chunks of the ${table} table`)
      const slots = this.#slots[table]
      const hashes = this.#hashes[table]
      if (slots === undefined || hashes === undefined) throw new TableLoadError(`the table loader handed over no index for the ${table} table`)
      tables[table] = { chunks, slots: new Uint32Array(slots), hashes: new Uint32Array(hashes) }
    }
    if (this.#pools === undefined) throw new TableLoadError('the table loader handed over no string pools')
    const pools = JSON.parse(Buffer.from(this.#pools.buffer, this.#pools.byteOffset, this.#pools.byteLength).toString('utf8')) as Record<string, string[]>
    return { ...(tables as Record<TableName, TableBuffers>), pools }
  }

  #startFrame(): void {
    this.#headerFill = 0
    const kind = this.#header.readUInt8(0)
    const table = TABLES[this.#header.readUInt8(1)]
    const index = this.#header.readUInt32LE(4)
    const length = this.#header.readUInt32LE(8)
    if (table === undefined) throw new TableLoadError(`the table loader sent a frame for table ${this.#header.readUInt8(1)}`)
    let buffer: ArrayBuffer
    switch (kind) {
      case Kind.Chunk:
        if (length > CompactTable.CHUNK_SIZE) throw new TableLoadError(`the table loader sent a chunk of ${length} bytes`)
        // A chunk sent again (after a compaction in the loader) reuses the buffer: its pages are already there.
        buffer = this.#chunks[table][index] ??= new ArrayBuffer(CompactTable.CHUNK_SIZE)
        break
      case Kind.Slots:
        buffer = this.#slots[table] = new ArrayBuffer(length)
        break
      case Kind.Hashes:
        buffer = this.#hashes[table] = new ArrayBuffer(length)
        break
      case Kind.Pools:
        buffer = new ArrayBuffer(length)
        this.#pools = new Uint8Array(buffer)
        break
      case Kind.End:
        this.#ended = true
        return
      default:
        throw new TableLoadError(`the table loader sent a frame of unknown kind ${String(kind)}`)
    }
    if (length > 0) {
      this.#target = new Uint8Array(buffer, 0, length)
      this.#targetPos = 0
    }
  }
}

/** The buffers of one table's state. */
export interface TableBuffers {
  chunks: ArrayBuffer[]
  slots: Uint32Array<ArrayBuffer>
  hashes: Uint32Array<ArrayBuffer>
}

/** What the `loaded` message carries besides the FIFO's bytes. */
export interface HandoverState {
  chunkCounts: Record<TableName, number>
}
