/**
 * Child process of lmdb-tables.test.ts: writes shop records to an LMDB store
 * without end, one commit per batch with the position it reaches, and says
 * each committed position on stdout; the test kills it with SIGKILL at any
 * moment. Record `offset` of partition 0 is shop `s<offset % KEYS>` with
 * fetchedAt = offset, so the store after the kill tells which records it holds.
 */
import { exampleShop } from '@tep/schemas'
import { openLmdbMerchantTables } from './lmdb-tables.ts'

export const KEYS = 700
const BATCH = 250
const dir = process.argv[2]!
const tables = openLmdbMerchantTables(dir, { invalidationsEnabled: true })
// A restart goes on from the stored position, as the table reader does.
let offset = Number(tables.storedState().positions['shops:0'] ?? 0)
for (;;) {
  for (let i = 0; i < BATCH; i++, offset++) {
    const uid = `s${offset % KEYS}`
    tables.shops.applyFromTopic(uid, { ...exampleShop(), uid, fetchedAt: offset, url: `https://shop.example/${offset}` })
  }
  // Two commits in flight as the table reader allows: the kill lands in one of them too.
  const position = offset
  void tables.commit([['shops:0', BigInt(position)]]).then(() => process.stdout.write(`${position}\n`))
  if ((offset / BATCH) % 2 === 0) await tables.commit([['shops:0', BigInt(offset)]])
}
