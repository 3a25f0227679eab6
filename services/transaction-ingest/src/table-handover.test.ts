import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CompactTable, type CompactTableState } from './compact-table.ts'
import { TableLoadError } from './errors.ts'
import { HandoverReceiver, HandoverSender } from './table-handover.ts'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempPath(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tep-handover-'))
  dirs.push(dir)
  return path.join(dir, name)
}

/** A table of `entries` entries with values big enough to fill several arena chunks. */
function filledTable(entries: number, tag: string): CompactTable {
  const table = new CompactTable()
  const value = Buffer.alloc(200_000, tag)
  for (let i = 0; i < entries; i++) table.set(`${tag}-${i}`, value)
  return table
}

/** Sends through a FIFO as the loader and the service do, both sides at once; the receiver once it read End. */
async function throughFifo(send: (sender: HandoverSender) => void): Promise<HandoverReceiver> {
  const fifo = tempPath('handover')
  execFileSync('mkfifo', ['-m', '600', fifo])
  const receiver = new HandoverReceiver()
  const reading = open(fifo, 'r').then(async (handle) => {
    try {
      await receiver.readFrom(handle.fd)
    } finally {
      await handle.close()
    }
  })
  await sendTo(fifo, send)
  await reading
  return receiver
}

/** Opens `target` for writing, sends through a HandoverSender on it, ends and closes it. */
async function sendTo(target: string, send: (sender: HandoverSender) => void): Promise<void> {
  const fd = openSync(target, 'w')
  try {
    const sender = new HandoverSender(fd)
    send(sender)
    await sender.end()
  } finally {
    closeSync(fd)
  }
}

/** What a HandoverSender writes, as a file. */
async function sentBytes(send: (sender: HandoverSender) => void): Promise<Buffer> {
  const file = tempPath('frames')
  await sendTo(file, send)
  return readFileSync(file)
}

/** A receiver that read `bytes` (a file) to its end. */
async function readBytes(bytes: Buffer): Promise<{ receiver: HandoverReceiver; error?: unknown }> {
  const file = tempPath('received')
  writeFileSync(file, bytes)
  const handle = await open(file, 'r')
  const receiver = new HandoverReceiver()
  try {
    await receiver.readFrom(handle.fd)
    return { receiver }
  } catch (error) {
    return { receiver, error }
  } finally {
    await handle.close()
  }
}

function expectSameTable(state: CompactTableState, got: { chunks: ArrayBuffer[]; slots: Uint32Array; hashes: Uint32Array }): void {
  expect(got.chunks).toHaveLength(state.chunks.length)
  state.chunks.forEach((chunk, i) => {
    const used = i === state.chunks.length - 1 ? state.chunkPos : CompactTable.CHUNK_SIZE
    expect(Buffer.from(got.chunks[i] as ArrayBuffer, 0, used).equals(Buffer.from(chunk, 0, used)), `chunk ${i}`).toBe(true)
  })
  expect(Buffer.from(got.slots.buffer).equals(Buffer.from(state.slots.buffer))).toBe(true)
  expect(Buffer.from(got.hashes.buffer).equals(Buffer.from(state.hashes.buffer))).toBe(true)
}

describe('the table hand-over', () => {
  it('delivers chunks sent while the load ran, the rest at the end, and the pools, through a FIFO', async () => {
    const shops = filledTable(400, 's')
    const merchants = filledTable(30, 'm')
    const pools = { 'Shop:category.name': ['Groceries', 'Travel'], 'Merchant:name': ['Žabka'] }
    const shopState = shops.peekState()
    const merchantState = merchants.peekState()
    expect(shopState.chunks.length).toBeGreaterThan(2)
    const receiver = await throughFifo((sender) => {
      // During the load the full chunks go, and again (nothing new) on the next round.
      sender.sendFull('shops', shopState)
      sender.sendFull('shops', shopState)
      sender.sendRest('shops', shopState)
      sender.sendRest('merchants', merchantState)
      sender.sendPools(pools)
    })
    expect(receiver.ended).toBe(true)
    // Each chunk went once: full ones whole, the last ones up to where they were written.
    const chunkBytes = (s: CompactTableState) => (s.chunks.length - 1) * CompactTable.CHUNK_SIZE + s.chunkPos
    const indexBytes = (s: CompactTableState) => s.slots.byteLength + s.hashes.byteLength
    expect(receiver.bytes).toBeLessThan(chunkBytes(shopState) + chunkBytes(merchantState) + indexBytes(shopState) + indexBytes(merchantState) + 1_000)
    const got = receiver.complete({ chunkCounts: { shops: shopState.chunks.length, merchants: merchantState.chunks.length } })
    expectSameTable(shopState, got.shops)
    expectSameTable(merchantState, got.merchants)
    expect(got.pools).toEqual(pools)
  })

  it('keeps the later bytes of a chunk sent again after the loader compacted its arena, and only as many chunks as it ended with', async () => {
    const table = new CompactTable()
    const big = Buffer.alloc(300_000, 'a')
    for (let i = 0; i < 300; i++) table.set(`k-${i}`, big)
    const before = table.peekState()
    const chunksBefore = before.chunks.length
    const receiver = await throughFifo((sender) => {
      sender.sendFull('shops', before)
      // Rewrites and deletions: the garbage passes the live bytes and the arena is compacted into fresh chunks.
      for (let i = 0; i < 300; i++) table.set(`k-${i}`, Buffer.alloc(300_000, 'b'))
      for (let i = 0; i < 250; i++) table.delete(`k-${i}`)
      const after = table.peekState()
      expect(after.chunks.length).toBeLessThan(chunksBefore)
      expect(after.chunks[0]).not.toBe(before.chunks[0])
      sender.sendRest('shops', after)
      sender.sendRest('merchants', new CompactTable().peekState())
      sender.sendPools({})
    })
    const after = table.peekState()
    const got = receiver.complete({ chunkCounts: { shops: after.chunks.length, merchants: 0 } })
    expectSameTable(after, got.shops)
    const restored = new CompactTable()
    restored.restoreState({ ...after, chunks: got.shops.chunks, slots: got.shops.slots, hashes: got.shops.hashes })
    expect(restored.size).toBe(50)
    expect(restored.get('k-299', (chunk, offset) => String.fromCharCode(chunk[offset] as number))).toBe('b')
  })

  it('refuses a hand-over that ended early, lacks a chunk or the pools, or holds a frame it does not know', async () => {
    const table = filledTable(400, 'x')
    const state = table.peekState()
    const counts = { chunkCounts: { shops: state.chunks.length, merchants: 0 } }
    const whole = await sentBytes((sender) => {
      sender.sendRest('shops', state)
      sender.sendRest('merchants', new CompactTable().peekState())
      sender.sendPools({})
    })
    const cut = await readBytes(whole.subarray(0, whole.length - 20))
    expect(cut.error).toEqual(new TableLoadError('the table loader process ended inside its hand-over'))
    expect(() => cut.receiver.complete(counts)).toThrow('the table loader process ended inside its hand-over')
    const full = await readBytes(whole)
    expect(full.error).toBeUndefined()
    expect(full.receiver.complete(counts).shops.chunks).toHaveLength(state.chunks.length)
    const more = state.chunks.length + 1
    expect(() => full.receiver.complete({ chunkCounts: { shops: more, merchants: 0 } })).toThrow(
      `the table loader handed over ${more - 1} of the ${more} arena chunks of the shops table`,
    )
    const noPools = await readBytes(
      await sentBytes((sender) => {
        sender.sendRest('shops', state)
        sender.sendRest('merchants', new CompactTable().peekState())
      }),
    )
    expect(() => noPools.receiver.complete(counts)).toThrow('the table loader handed over no string pools')
    const garbage = await readBytes(Buffer.from([9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 7]))
    expect(garbage.error).toEqual(new TableLoadError('the table loader sent a frame of unknown kind 9'))
  })
})
