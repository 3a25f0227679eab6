import type { Merchant, Shop } from '@tep/schemas'
import { SimDataset } from '@tep/sim-data'
import { processCpuIfAlive } from './cpu.ts'
import { createTopic, processMemoryMb, produceAll, waitForHttpOk, type BenchContext } from './harness.ts'
import { PARTITIONS, type SimHandle } from './processors.ts'
import { ingestTopics, startIngest } from './scenarios.ts'

export interface MemoryResult {
  shops: number
  merchants: number
  rssMb: number
  peakRssMb: number
  /** From spawning the ingest process to /readyz answering 200 (table loaded and handed over). */
  loadSeconds: number
  /** Table records (shops + merchants) loaded per second. */
  eventsPerSecond: number
  /** CPU of the ingest process and its table loader up to ready, per table record loaded. */
  cpuUsPerEvent: number
  /** How long producing the table topics took (not part of the load). */
  seedSeconds: number
}

function shopEvent(s: ReturnType<SimDataset['shop']>, fetchedAt: number): Shop {
  return {
    uid: s.uid,
    type: s.type,
    tags: [...s.tags],
    merchantUid: s.merchantUid,
    category: { name: s.category.name, logo: s.category.logo },
    location: {
      address: { street: s.address.street, city: s.address.city, zip: s.address.zip, country: s.address.country, areas: { ...s.address.areas } },
      coordinates: s.coordinates ? { type: s.coordinates.type, lat: s.coordinates.lat, long: s.coordinates.long } : null,
    },
    url: s.url,
    googlePlaceId: s.googlePlaceId ?? null,
    fetchedAt,
    invalidationItemId: null,
  }
}

function merchantEvent(m: ReturnType<SimDataset['merchant']>, fetchedAt: number): Merchant {
  return { uid: m.uid, name: m.name, logo: m.logo, url: m.url, categoryName: m.category.name, fetchedAt, invalidationItemId: null }
}

export interface TableTopics {
  shops: string
  merchants: string
  /** How long producing them took. */
  seedSeconds: number
}

/**
 * Compacted shop and merchant topics holding every entity of `data`, as the
 * refresher would have written them: the steady state in which ingest resolves
 * details from its table instead of the API.
 */
export async function seedTables(ctx: BenchContext, name: string, data: SimDataset): Promise<TableTopics> {
  const started = Date.now()
  const topics = {
    shops: await createTopic(ctx, `bench.${ctx.runId}.${name}.shops`, PARTITIONS, true),
    merchants: await createTopic(ctx, `bench.${ctx.runId}.${name}.merchants`, PARTITIONS, true),
  }
  const shopCodec = ctx.serde.topic(topics.shops, 'Shop')
  const merchantCodec = ctx.serde.topic(topics.merchants, 'Merchant')
  await Promise.all([shopCodec.register(), merchantCodec.register()])
  const now = Date.now()
  const chunk = 50_000
  for (let i = 0; i < data.shopCount; i += chunk) {
    const messages = []
    for (let j = i; j < Math.min(data.shopCount, i + chunk); j++) {
      const s = data.shop(j)
      messages.push({ key: s.uid, value: shopCodec.encodeSync(shopEvent(s, now)) })
    }
    await produceAll(ctx, topics.shops, messages)
    if (data.shopCount > chunk) ctx.say(`  shops produced: ${Math.min(data.shopCount, i + chunk)}/${data.shopCount}`)
  }
  const merchantMessages = []
  for (let m = 0; m < data.merchantCount; m++) {
    const mm = data.merchant(m)
    merchantMessages.push({ key: mm.uid, value: merchantCodec.encodeSync(merchantEvent(mm, now)) })
  }
  await produceAll(ctx, topics.merchants, merchantMessages)
  return { ...topics, seedSeconds: Math.round((Date.now() - started) / 100) / 10 }
}

/** RSS of one ingest process whose table holds `shops` shops (read from its compacted topic). */
export async function memory(ctx: BenchContext, sim: SimHandle, shops: number, metricsPort: number, tables: TableTopics): Promise<MemoryResult> {
  const merchants = Math.max(1, Math.round(shops / 10))
  const topics = await ingestTopics(ctx, 'memory', undefined, tables)
  const started = Date.now()
  const ingest = startIngest(ctx, sim, topics, 'batch', metricsPort)
  try {
    await waitForHttpOk(`http://127.0.0.1:${metricsPort}/readyz`, 900_000, 50)
    const loadSeconds = (Date.now() - started) / 1000
    // The loader child has exited and been waited for by now: its CPU is in `childrenUs`.
    const cpu = processCpuIfAlive(ingest.child.pid)
    // Settle: let the loader's garbage be collected before reading RSS.
    await new Promise((r) => setTimeout(r, 5_000))
    const mem = processMemoryMb(ingest.child.pid!)
    return {
      shops,
      merchants,
      ...mem,
      loadSeconds: Math.round(loadSeconds * 10) / 10,
      eventsPerSecond: Math.round((shops + merchants) / loadSeconds),
      cpuUsPerEvent: cpu === undefined ? Number.NaN : Math.round(((cpu.selfUs + cpu.childrenUs) / (shops + merchants)) * 10) / 10,
      seedSeconds: tables.seedSeconds,
    }
  } finally {
    await ingest.kill()
  }
}

/** The shop and merchant topics of the memory run, `shops` shops and shops/10 merchants; seeded once per run. */
export function seedMemoryTables(ctx: BenchContext, shops: number): Promise<TableTopics> {
  return seedTables(ctx, 'memory', new SimDataset({ shops, merchants: Math.max(1, Math.round(shops / 10)) }))
}

