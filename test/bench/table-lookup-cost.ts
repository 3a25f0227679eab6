/**
 * CPU per table lookup of each table store (INGEST_TABLE_STORE), in one
 * process: fills a compact table and an LMDB store with the same `shops`
 * shops (and a tenth as many merchants) of the simulator's data set, then
 * times getAvro of a shop and of its merchant (what the ingest does per
 * enriched event, MerchantDetails with tableHitsAsAvro), alternating the
 * stores over `rounds` rounds. A check of the in-process cost only: the
 * ingest's cpuUsPerEvent (`--table-store lmdb --scenarios ingest-batch`) is the figure of record.
 *
 *   npm exec -- node test/bench/table-lookup-cost.ts [shops=200000] [lookups=200000] [rounds=3]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { SimDataset } from '@tep/sim-data'
import { createMerchantTables, merchantSnapshot, openLmdbMerchantTables, shopSnapshot, type DetailTables } from '@tep/transaction-ingest'

const shops = Number(process.argv[2] ?? 200_000)
const lookups = Number(process.argv[3] ?? 200_000)
const rounds = Number(process.argv[4] ?? 3)
const merchants = Math.max(1, Math.round(shops / 10))
const data = new SimDataset({ seed: 1, shops, merchants })
const dir = mkdtempSync(path.join(tmpdir(), 'tep-lookup-cost-'))
const compact = createMerchantTables({ invalidationsEnabled: true })
const lmdb = openLmdbMerchantTables(dir, { invalidationsEnabled: true })
const fetchedAt = Date.now()
const uids: string[] = []
for (const tables of [compact, lmdb] as DetailTables[]) {
  for (let m = 0; m < merchants; m++) {
    const sim = data.merchant(m)
    tables.merchants.applyFromTopic(sim.uid, merchantSnapshot(sim as never, sim.uid, fetchedAt))
  }
  for (let i = 0; i < shops; i++) {
    const sim = data.shop(i)
    if (tables === compact) uids.push(sim.uid)
    const api = { uid: sim.uid, type: sim.type, merchantUid: sim.merchantUid, tags: [...sim.tags], category: sim.category, location: { address: sim.address, ...(sim.coordinates === undefined ? {} : { coordinates: sim.coordinates }) }, url: sim.url, ...(sim.googlePlaceId === undefined ? {} : { googlePlaceId: sim.googlePlaceId }) }
    tables.shops.applyFromTopic(sim.uid, shopSnapshot(api as never, sim.uid, fetchedAt))
  }
}
await lmdb.commit([])

function lookupAll(tables: DetailTables): number {
  const started = process.cpuUsage()
  let bytes = 0
  for (let i = 0; i < lookups; i++) {
    const hit = tables.shops.getAvro(uids[(i * 7919) % uids.length]!)
    bytes += hit!.avro.length
    if (hit!.captured !== null) bytes += tables.merchants.getAvro(hit!.captured)?.avro.length ?? 0
  }
  const used = process.cpuUsage(started)
  if (bytes === 0) throw new Error('nothing found')
  return (used.user + used.system) / lookups
}

const result: Record<string, number[]> = { compact: [], lmdb: [] }
for (let r = 0; r < rounds; r++)
  for (const [name, tables] of [['compact', compact], ['lmdb', lmdb]] as const) result[name]!.push(Math.round(lookupAll(tables) * 100) / 100)
await lmdb.close()
rmSync(dir, { recursive: true, force: true })
process.stdout.write(`${JSON.stringify({ shops, merchants, lookups, cpuUsPerShopAndMerchantLookup: result })}\n`)
