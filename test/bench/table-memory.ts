/**
 * Measures what the shop/merchant table costs: fills it with the shops and
 * merchants of the enrichment simulator's data set (@tep/sim-data, the data the
 * API answers with: chains and single shops, real street and city names, place
 * ids, per-shop URLs) converted exactly as ingest converts API answers, and
 * prints table bytes, RSS and heap before and after, as JSON.
 *
 *   npm exec -- node --expose-gc test/bench/table-memory.ts [shops=1000000] [merchants=100000]
 */
import { SimDataset } from '@tep/sim-data'
import { createMerchantTables, merchantSnapshot, shopSnapshot } from '@tep/transaction-ingest'

const shops = Number(process.argv[2] ?? 1_000_000)
const merchants = Number(process.argv[3] ?? 100_000)
const gc = (globalThis as { gc?: () => void }).gc

function mb(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10
}

function snapshot(): { rssMb: number; heapUsedMb: number; externalMb: number; arrayBuffersMb: number } {
  gc?.()
  const m = process.memoryUsage()
  return {
    rssMb: mb(m.rss),
    heapUsedMb: mb(m.heapUsed),
    externalMb: mb(m.external),
    arrayBuffersMb: mb(m.arrayBuffers),
  }
}

const data = new SimDataset({ seed: 1, shops, merchants })
const before = snapshot()
const tables = createMerchantTables({ invalidationsEnabled: true })
const started = Date.now()
const fetchedAt = Date.now()
for (let m = 0; m < merchants; m++) {
  const sim = data.merchant(m)
  tables.merchants.applyFromTopic(
    sim.uid,
    merchantSnapshot(sim as unknown as Parameters<typeof merchantSnapshot>[0], sim.uid, fetchedAt),
  )
}
for (let i = 0; i < shops; i++) {
  const sim = data.shop(i)
  const api = {
    uid: sim.uid,
    type: sim.type,
    merchantUid: sim.merchantUid,
    tags: [...sim.tags],
    category: sim.category,
    location: {
      address: sim.address,
      ...(sim.coordinates === undefined ? {} : { coordinates: sim.coordinates }),
    },
    url: sim.url,
    ...(sim.googlePlaceId === undefined ? {} : { googlePlaceId: sim.googlePlaceId }),
  }
  tables.shops.applyFromTopic(sim.uid, shopSnapshot(api, sim.uid, fetchedAt))
}
const loadMs = Date.now() - started
const after = snapshot()
process.stdout.write(
  `${JSON.stringify(
    {
      shops: tables.shops.size,
      merchants: tables.merchants.size,
      pooledStrings: tables.pooledStrings(),
      loadMs,
      tableBytes: { shops: tables.shops.memoryBytes, merchants: tables.merchants.memoryBytes },
      bytesPerShop: Math.round(tables.shops.memoryBytes / tables.shops.size),
      before,
      after,
      rssGrowthPerShopBytes: Math.round(((after.rssMb - before.rssMb) * 1024 * 1024) / shops),
    },
    null,
    2,
  )}\n`,
)
