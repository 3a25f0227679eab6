import { crc32 } from 'node:zlib'
import { open, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
const SIZE = 160 * 1024 * 1024, CH = 32 << 20
const f = '/tmp/crcprobe.bin'
if (!existsSync(f)) { const data = Buffer.allocUnsafe(SIZE); for (let i = 0; i < SIZE; i += 4096) data[i] = i & 255; await writeFile(f, data) }
const mode = process.argv[2]
const t = performance.now(); let crcMs = 0, readMs = 0, allocMs = 0
const h = await open(f)
let pos = 0, c = 0
while (pos < SIZE) {
  let t1 = performance.now()
  const ab = new ArrayBuffer(CH); const u = new Uint8Array(ab)
  if (mode === 'touch') u.fill(0)
  allocMs += performance.now() - t1; t1 = performance.now()
  let done = 0; while (done < CH) { const { bytesRead } = await h.read(u, done, CH - done, pos + done); done += bytesRead }
  pos += CH
  readMs += performance.now() - t1; t1 = performance.now()
  c = crc32(u, c); crcMs += performance.now() - t1
}
await h.close()
console.log(mode, (performance.now() - t).toFixed(0), 'ms; alloc', allocMs.toFixed(0), 'read', readMs.toFixed(0), 'crc', crcMs.toFixed(0))
