/**
 * The table checkpoint file: the shop and merchant topic tables (arena chunks,
 * hash index, string pools) with the topic positions they reflect, so that a
 * restarted instance reads its table from disk and replays only what the
 * topics got since (as a Kafka Streams state store with its checkpoint file).
 *
 * Layout (little-endian numbers; the index arrays as the machine holds them,
 * the header says which byte order that is):
 *
 *   "TEPTABLE" | u32 format | u32 header length | header JSON
 *   | per shard (one, or one per loader process of a sharded load; see
 *     SnapshotTable): pools JSON | per table (shops, merchants): used bytes of
 *     each arena chunk, slots, hashes
 *   | u32 CRC-32 of everything before | "TEPTBLOK"
 *
 * Written to a temporary file in the same directory, fsynced, then renamed
 * over the previous one: a reader sees the old file or the new one, never a
 * mix. A file whose size, trailer or checksum does not match is refused
 * (`CheckpointRefused`) and the caller loads the table from the topics.
 */
import { constants, type FileHandle, open, rename, rm } from 'node:fs/promises'
import { endianness } from 'node:os'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import { CompactTable, type CompactTableState } from './compact-table.ts'
import { CheckpointRefused } from './errors.ts'
import type { MerchantTablesState } from './snapshot-table.ts'

export const CHECKPOINT_FILE = 'table.checkpoint'
/** Bumped whenever the layout of the file or of the tables' encoding changes (2: shards). */
export const CHECKPOINT_FORMAT = 2
const MAGIC = Buffer.from('TEPTABLE')
const TRAILER = Buffer.from('TEPTBLOK')
const PREAMBLE = MAGIC.length + 8

/** Where one table topic stood when the checkpoint was written. */
export interface CheckpointTopic {
  name: string
  /** Topic id (KIP-516) at the time of writing. */
  id: string
}

export interface CheckpointHeader {
  format: number
  byteOrder: 'LE' | 'BE'
  writtenAt: number
  clusterId: string
  topics: { shops: CheckpointTopic; merchants: CheckpointTopic }
  /** Fingerprint of the schemas and options the tables' compact encoding derives from. */
  layout: string
  /** Next offset to read per `${topic}:${partition}`: the table holds everything before it. */
  positions: Record<string, string>
  /** The table shards, the primary first. */
  shards: ShardShape[]
}

interface ShardShape {
  poolsBytes: number
  tables: { shops: TableShape; merchants: TableShape }
}

interface TableShape {
  chunks: number
  chunkPos: number
  capacity: number
  size: number
  deleted: number
  liveBytes: number
  garbageBytes: number
}

const TABLES = ['shops', 'merchants'] as const

function shapeOf(state: CompactTableState): TableShape {
  return {
    chunks: state.chunks.length,
    chunkPos: state.chunkPos,
    capacity: state.slots.length,
    size: state.size,
    deleted: state.deleted,
    liveBytes: state.liveBytes,
    garbageBytes: state.garbageBytes,
  }
}

/** Bytes of chunk `i` of a table of this shape that hold data. */
function usedBytes(shape: TableShape, i: number): number {
  return i === shape.chunks - 1 ? shape.chunkPos : CompactTable.CHUNK_SIZE
}

function bodyBytes(header: CheckpointHeader): number {
  if (!Array.isArray(header.shards) || header.shards.length === 0) throw new CheckpointRefused('its header lists no table shards')
  let n = 0
  for (const shard of header.shards) {
    n += shard.poolsBytes
    for (const t of TABLES) {
      const shape = shard.tables[t]
      for (let i = 0; i < shape.chunks; i++) n += usedBytes(shape, i)
      n += shape.capacity * 8
    }
  }
  return n
}

export interface CheckpointContent {
  header: Omit<CheckpointHeader, 'format' | 'byteOrder' | 'shards'>
  /** One state per table shard, the primary first (MerchantTables.topicState). */
  state: readonly MerchantTablesState[]
}

/**
 * Writes `content` to `dir`/CHECKPOINT_FILE atomically. The tables' buffers are
 * written as they are: nothing may change them until the returned promise settles.
 */
export async function writeCheckpoint(dir: string, content: CheckpointContent): Promise<{ file: string; bytes: number }> {
  const pools = content.state.map((shard) => Buffer.from(JSON.stringify(shard.pools), 'utf8'))
  const header: CheckpointHeader = {
    ...content.header,
    format: CHECKPOINT_FORMAT,
    byteOrder: endianness(),
    shards: content.state.map((shard, i) => ({
      poolsBytes: pools[i]!.length,
      tables: { shops: shapeOf(shard.shops), merchants: shapeOf(shard.merchants) },
    })),
  }
  const file = path.join(dir, CHECKPOINT_FILE)
  const temp = path.join(dir, `${CHECKPOINT_FILE}.${process.pid}.tmp`)
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600)
  let crc = 0
  let bytes = 0
  const put = async (data: Uint8Array): Promise<void> => {
    // The write runs on libuv's pool while this thread computes the checksum of the same bytes.
    const writing = (async () => {
      let done = 0
      while (done < data.length) {
        const { bytesWritten } = await handle.write(data, done, data.length - done)
        done += bytesWritten
      }
    })()
    crc = crc32(data, crc)
    await writing
    bytes += data.length
  }
  try {
    const json = Buffer.from(JSON.stringify(header), 'utf8')
    const preamble = Buffer.alloc(PREAMBLE)
    MAGIC.copy(preamble, 0)
    preamble.writeUInt32LE(CHECKPOINT_FORMAT, MAGIC.length)
    preamble.writeUInt32LE(json.length, MAGIC.length + 4)
    await put(preamble)
    await put(json)
    for (const [s, shard] of header.shards.entries()) {
      await put(pools[s]!)
      for (const t of TABLES) {
        const state = content.state[s]![t]
        const shape = shard.tables[t]
        for (let i = 0; i < shape.chunks; i++) await put(new Uint8Array(state.chunks[i]!, 0, usedBytes(shape, i)))
        await put(new Uint8Array(state.slots.buffer, state.slots.byteOffset, state.slots.byteLength))
        await put(new Uint8Array(state.hashes.buffer, state.hashes.byteOffset, state.hashes.byteLength))
      }
    }
    const trailer = Buffer.alloc(4 + TRAILER.length)
    trailer.writeUInt32LE(crc >>> 0, 0)
    TRAILER.copy(trailer, 4)
    await handle.write(trailer)
    bytes += trailer.length
    await handle.sync()
  } catch (err) {
    await handle.close().catch(() => {})
    await rm(temp, { force: true })
    throw err
  }
  await handle.close()
  await rename(temp, file)
  // The rename itself must survive a power loss too.
  const dirHandle = await open(dir, constants.O_RDONLY).catch(() => undefined)
  await dirHandle?.sync().catch(() => {})
  await dirHandle?.close()
  return { file, bytes }
}

/**
 * Reads the header of `dir`/CHECKPOINT_FILE (cheap: the body is not read), or
 * undefined when there is no file. Refuses a file that is not a checkpoint of
 * this format or whose size does not match its header (truncated).
 */
export async function readCheckpointHeader(dir: string): Promise<{ header: CheckpointHeader; size: number } | undefined> {
  let handle: FileHandle
  try {
    handle = await open(path.join(dir, CHECKPOINT_FILE), constants.O_RDONLY)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new CheckpointRefused(`it cannot be opened: ${(err as Error).message}`)
  }
  try {
    const size = (await handle.stat()).size
    if (size < PREAMBLE) throw new CheckpointRefused(`it is ${size} bytes, shorter than any checkpoint (truncated)`)
    const preamble = await readExactly(handle, 0, PREAMBLE)
    if (!preamble.subarray(0, MAGIC.length).equals(MAGIC)) throw new CheckpointRefused('it is not a table checkpoint (no magic bytes)')
    const format = preamble.readUInt32LE(MAGIC.length)
    if (format !== CHECKPOINT_FORMAT)
      throw new CheckpointRefused(`it has format ${format}, this version reads format ${CHECKPOINT_FORMAT}`)
    const headerLength = preamble.readUInt32LE(MAGIC.length + 4)
    if (PREAMBLE + headerLength > size) throw new CheckpointRefused(`it ends inside its header (truncated at ${size} bytes)`)
    let header: CheckpointHeader
    try {
      header = JSON.parse((await readExactly(handle, PREAMBLE, headerLength)).toString('utf8')) as CheckpointHeader
    } catch (err) {
      throw new CheckpointRefused(`its header is not valid JSON: ${(err as Error).message}`)
    }
    if (header.byteOrder !== endianness())
      throw new CheckpointRefused(`it was written on a ${header.byteOrder} machine, this one is ${endianness()}`)
    let body: number
    try {
      body = bodyBytes(header)
    } catch (err) {
      if (err instanceof CheckpointRefused) throw err
      throw new CheckpointRefused(`its header does not describe its table shards: ${(err as Error).message}`)
    }
    const expected = PREAMBLE + headerLength + body + 4 + TRAILER.length
    if (size !== expected)
      throw new CheckpointRefused(`it is ${size} bytes where its header announces ${expected} (truncated or damaged)`)
    return { header, size }
  } finally {
    await handle.close()
  }
}

/**
 * Reads the whole checkpoint into table state (arena chunks straight into
 * chunk-sized buffers) and checks its CRC-32. `header` is what
 * readCheckpointHeader returned for the same file.
 */
export async function readCheckpointBody(dir: string, header: CheckpointHeader): Promise<MerchantTablesState[]> {
  const handle = await open(path.join(dir, CHECKPOINT_FILE), constants.O_RDONLY)
  try {
    const headerLength = (await readExactly(handle, MAGIC.length + 4, 4)).readUInt32LE(0)
    let crc = crc32(await readExactly(handle, 0, PREAMBLE + headerLength))
    let pos = PREAMBLE + headerLength
    // The checksum of each piece is computed while the next one is read (libuv's pool).
    let unchecked: Uint8Array | undefined
    const take = async (target: Uint8Array): Promise<void> => {
      const reading = readInto(handle, pos, target)
      pos += target.length
      if (unchecked !== undefined) crc = crc32(unchecked, crc)
      await reading
      unchecked = target
    }
    const shards: Array<{ pools: Buffer; tables: Record<(typeof TABLES)[number], CompactTableState> }> = []
    for (const shard of header.shards) {
      const pools = Buffer.allocUnsafe(shard.poolsBytes)
      await take(pools)
      const tables = {} as Record<(typeof TABLES)[number], CompactTableState>
      for (const t of TABLES) {
        const shape = shard.tables[t]
        const chunks: ArrayBuffer[] = []
        for (let i = 0; i < shape.chunks; i++) {
          const chunk = new ArrayBuffer(CompactTable.CHUNK_SIZE)
          await take(new Uint8Array(chunk, 0, usedBytes(shape, i)))
          chunks.push(chunk)
        }
        const slots = new Uint32Array(shape.capacity)
        await take(new Uint8Array(slots.buffer))
        const hashes = new Uint32Array(shape.capacity)
        await take(new Uint8Array(hashes.buffer))
        const { chunkPos, size, deleted, liveBytes, garbageBytes } = shape
        tables[t] = { chunks, chunkPos, slots, hashes, size, deleted, liveBytes, garbageBytes }
      }
      shards.push({ pools, tables })
    }
    if (unchecked !== undefined) crc = crc32(unchecked, crc)
    const trailer = await readExactly(handle, pos, 4 + TRAILER.length)
    if (!trailer.subarray(4).equals(TRAILER)) throw new CheckpointRefused('its trailer is missing (truncated or damaged)')
    if (trailer.readUInt32LE(0) !== crc >>> 0) throw new CheckpointRefused('its checksum does not match its content (damaged)')
    return shards.map(({ pools, tables }) => {
      let poolState: MerchantTablesState['pools']
      try {
        poolState = JSON.parse(pools.toString('utf8')) as MerchantTablesState['pools']
      } catch (err) {
        throw new CheckpointRefused(`its string pools are not valid JSON: ${(err as Error).message}`)
      }
      return { shops: tables.shops, merchants: tables.merchants, pools: poolState }
    })
  } finally {
    await handle.close()
  }
}

async function readExactly(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length)
  await readInto(handle, position, buf)
  return buf
}

async function readInto(handle: FileHandle, position: number, target: Uint8Array): Promise<void> {
  let done = 0
  while (done < target.length) {
    const { bytesRead } = await handle.read(target, done, target.length - done, position + done)
    if (bytesRead === 0) throw new CheckpointRefused(`it ended at byte ${position + done} (truncated)`)
    done += bytesRead
  }
}
