import { readFileSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { createRecordProducer, createTransactionalWriter, OffsetReader } from '@tep/kafka'
import type { Merchant, Shop } from '@tep/schemas'
import { CHECKPOINT_FILE } from '@tep/transaction-ingest'
import { SimDataset } from '@tep/sim-data'
import { processCpuIfAlive } from './cpu.ts'
import { createTopic, processMemoryMb, waitForHttpOk, type BenchContext } from './harness.ts'
import { PARTITIONS, type SimHandle } from './processors.ts'
import { ingestTopics, startIngest } from './scenarios.ts'

export interface MemoryResult {
  shops: number
  merchants: number
  /** RSS of the cold-loaded ingest once ready and settled, and its peak up to then. */
  rssMb: number
  peakRssMb: number
  /** From spawning the ingest process (no checkpoint) to /readyz answering 200 (table loaded and handed over). */
  coldLoadSeconds: number
  /** The same after a clean stop, with the checkpoint that stop left in INGEST_STATE_DIR. */
  warmRestartSeconds: number
  /**
   * Two more warm restarts right after it, alternated: without Node's compile cache
   * (NODE_DISABLE_COMPILE_CACHE=1), then with it again: the cache's share of a restart.
   */
  warmRestartWithoutCompileCacheSeconds: number
  warmRestartAgainSeconds: number
  /** RSS of the warm-restarted ingest once ready and settled, and its peak. */
  warmRssMb: number
  warmPeakRssMb: number
  /** Size of the checkpoint file the clean stop left. */
  checkpointMb: number
  /**
   * RSS split as the kernel counts it (/proc/<pid>/status), once ready and settled:
   * anonymous memory (heap, arena: the table) and resident file-backed pages
   * (the node binary and mapped files: clean page cache the kernel can drop).
   */
  rssAnonMb: number
  rssFileMb: number
  warmRssAnonMb: number
  warmRssFileMb: number
  /** Table records (shops + merchants) loaded per second, cold. */
  eventsPerSecond: number
  /** CPU of the ingest process and its table loader up to ready (cold), per table record loaded. */
  cpuUsPerRecord: number
  /** How long producing the table topics took (not part of the load). */
  seedSeconds: number
  /**
   * The same cold load with INGEST_TABLE_TRANSCODE=false (every record through
   * avsc objects, as before the transcoder), in the same run for comparison.
   */
  avscColdLoadSeconds?: number
  avscCpuUsPerRecord?: number
  avscPeakRssMb?: number
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
  // One producer for everything, the next batch encoded while earlier ones are in
  // flight (a producer per chunk and encode-then-send made 5M shops take tens of minutes).
  const producers = [createRecordProducer(ctx.kafka), createRecordProducer(ctx.kafka)]
  let turn = 0
  try {
    const batch = 5_000
    const inFlight: Promise<unknown>[] = []
    const send = async (topic: string, messages: Array<{ key: string; value: Buffer }>) => {
      // Each producer sends one request after the other: two of them keep two in flight.
      inFlight.push(producers[turn++ % producers.length]!.send(topic, messages))
      if (inFlight.length >= 8) await inFlight.shift()
    }
    let reported = 0
    for (let i = 0; i < data.shopCount; i += batch) {
      const messages = []
      for (let j = i; j < Math.min(data.shopCount, i + batch); j++) {
        const s = data.shop(j)
        messages.push({ key: s.uid, value: shopCodec.encodeSync(shopEvent(s, now)) })
      }
      await send(topics.shops, messages)
      if (i + batch - reported >= 500_000) {
        reported = i + batch
        ctx.say(`  shops produced: ${Math.min(data.shopCount, i + batch)}/${data.shopCount} (${Math.round((Date.now() - started) / 1000)} s)`)
      }
    }
    for (let m = 0; m < data.merchantCount; m += batch) {
      const messages = []
      for (let j = m; j < Math.min(data.merchantCount, m + batch); j++) {
        const mm = data.merchant(j)
        messages.push({ key: mm.uid, value: merchantCodec.encodeSync(merchantEvent(mm, now)) })
      }
      await send(topics.merchants, messages)
    }
    await Promise.all(inFlight)
  } finally {
    await Promise.all(producers.map((p) => p.close()))
  }
  return { ...topics, seedSeconds: Math.round((Date.now() - started) / 100) / 10 }
}

/**
 * One ingest process whose table holds `shops` shops (read from its compacted
 * topic): loaded cold, stopped cleanly (which leaves the table checkpoint in
 * INGEST_STATE_DIR), then started again on that checkpoint.
 */
export async function memory(ctx: BenchContext, sim: SimHandle, shops: number, metricsPort: number, tables: TableTopics, compareAvsc = true, name = 'memory'): Promise<MemoryResult> {
  const merchants = Math.max(1, Math.round(shops / 10))
  const records = shops + merchants
  const topics = await ingestTopics(ctx, name, undefined, tables)
  const stateDir = await mkdtemp(path.join(tmpdir(), 'tep-bench-ingest-state-'))
  try {
    const env = { INGEST_STATE_DIR: stateDir }
    // A long-lived cluster has its internal topics; the bench's fresh one creates them on first
    // use, which would land inside the first timed start (1.4 s of a 31 s cold load, measured).
    await warmInternalTopics(ctx, name)
    // First the old path (no checkpoint dir), then the default path, which leaves the checkpoint.
    const avsc = compareAvsc ? await runUntilReady(ctx, sim, topics, metricsPort, { INGEST_TABLE_TRANSCODE: 'false', INGEST_STATE_DIR: undefined }) : undefined
    const cold = await runUntilReady(ctx, sim, topics, metricsPort, env)
    const checkpointMb = Math.round(statSync(path.join(stateDir, CHECKPOINT_FILE)).size / 1024 / 102.4) / 10
    const warm = await runUntilReady(ctx, sim, topics, metricsPort, env)
    if (!warm.fromCheckpoint) ctx.say('  the restarted ingest did not use the checkpoint (see its log)')
    const warmWithoutCache = await runUntilReady(ctx, sim, topics, metricsPort, { ...env, NODE_DISABLE_COMPILE_CACHE: '1' })
    const warmAgain = await runUntilReady(ctx, sim, topics, metricsPort, env)
    return {
      shops,
      merchants,
      rssMb: cold.rssMb,
      rssAnonMb: cold.rssAnonMb,
      rssFileMb: cold.rssFileMb,
      warmRssAnonMb: warm.rssAnonMb,
      warmRssFileMb: warm.rssFileMb,
      peakRssMb: cold.peakRssMb,
      coldLoadSeconds: cold.readySeconds,
      warmRestartSeconds: warm.readySeconds,
      warmRestartWithoutCompileCacheSeconds: warmWithoutCache.readySeconds,
      warmRestartAgainSeconds: warmAgain.readySeconds,
      warmRssMb: warm.rssMb,
      warmPeakRssMb: warm.peakRssMb,
      checkpointMb,
      eventsPerSecond: Math.round(records / cold.readySeconds),
      cpuUsPerRecord: Number.isFinite(cold.cpuUs) ? Math.round((cold.cpuUs / records) * 10) / 10 : Number.NaN,
      seedSeconds: tables.seedSeconds,
      ...(avsc === undefined
        ? {}
        : {
            avscColdLoadSeconds: avsc.readySeconds,
            avscCpuUsPerRecord: Number.isFinite(avsc.cpuUs) ? Math.round((avsc.cpuUs / records) * 10) / 10 : Number.NaN,
            avscPeakRssMb: avsc.peakRssMb,
          }),
    }
  } finally {
    await rm(stateDir, { recursive: true, force: true })
  }
}

/**
 * Makes the cluster create __transaction_state and __consumer_offsets (a
 * transactional writer's first transaction, a group's committed offsets), as
 * any cluster that ran a transaction and a group before has them.
 */
async function warmInternalTopics(ctx: BenchContext, name: string): Promise<void> {
  // Once per memory run of the bench (each round): a name of its own.
  const topic = await createTopic(ctx, `bench.${ctx.runId}.${name}.warm-up`, 1)
  const writer = createTransactionalWriter(ctx.kafka, { transactionalId: `bench-warm-${ctx.runId}` })
  const offsets = new OffsetReader(ctx.kafka)
  try {
    await writer.run((tx) => tx.send(topic, [{ key: 'warm-up', value: Buffer.from('warm-up') }]))
    await offsets.setCommittedOffsets(`bench-warm-${ctx.runId}`, topic, [{ partition: 0, offset: 0n }])
  } finally {
    await Promise.all([writer.close(), offsets.close()])
  }
}

/** Starts the ingest, waits for ready, reads its CPU and (settled) memory, then stops it cleanly (SIGTERM). */
async function runUntilReady(ctx: BenchContext, sim: SimHandle, topics: Awaited<ReturnType<typeof ingestTopics>>, metricsPort: number, env: NodeJS.ProcessEnv) {
  const started = Date.now()
  const ingest = startIngest(ctx, sim, topics, 'batch', metricsPort, { ...env, LOG_LEVEL: 'info' })
  let log = ''
  ingest.child.stdout?.on('data', (d: Buffer) => {
    if (log.length < 1_000_000) log += d.toString()
  })
  try {
    await waitForHttpOk(`http://127.0.0.1:${metricsPort}/readyz`, 900_000, 50)
    const readySeconds = Math.round((Date.now() - started) / 100) / 10
    // The loader child has exited and been waited for by now: its CPU is in `childrenUs`.
    const cpu = processCpuIfAlive(ingest.child.pid)
    // Settle: let the loader's garbage be collected before reading RSS.
    await new Promise((r) => setTimeout(r, 5_000))
    const mem = { ...processMemoryMb(ingest.child.pid!), ...rssSplitMb(ingest.child.pid!) }
    return { readySeconds, cpuUs: cpu === undefined ? Number.NaN : cpu.selfUs + cpu.childrenUs, ...mem, fromCheckpoint: log.includes('table restored from its checkpoint') }
  } finally {
    // A clean stop: the ingest writes (or finishes writing) its checkpoint before it exits.
    await ingest.kill('SIGTERM')
  }
}

/** RssAnon and RssFile of a process (see MemoryResult). */
function rssSplitMb(pid: number): { rssAnonMb: number; rssFileMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
  return { rssAnonMb: Math.round(kb('RssAnon') / 102.4) / 10, rssFileMb: Math.round(kb('RssFile') / 102.4) / 10 }
}

/**
 * The memory run `rounds` times on the same topics (the machine drifts). The
 * first round is the row's figures; `rounds` lists every round, `loadAverages`
 * the load average at the start of each.
 */
export async function memoryInRounds(
  ctx: BenchContext,
  sim: SimHandle,
  shops: number,
  metricsPort: number,
  tables: TableTopics,
  compareAvsc: boolean,
  rounds: number,
): Promise<MemoryResult & { rounds: MemoryResult[]; loadAverages: number[][] }> {
  const all: MemoryResult[] = []
  const loadAverages: number[][] = []
  for (let round = 0; round < rounds; round++) {
    ctx.say(`  memory: round ${round + 1}/${rounds} (load ${loadavg().map((l) => l.toFixed(1)).join(' ')})`)
    loadAverages.push(loadavg().map((l) => Math.round(l * 10) / 10))
    // The avsc comparison once, with the first round.
    const result = await memory(ctx, sim, shops, metricsPort, tables, compareAvsc && round === 0, `memory-${round + 1}`)
    ctx.say(`    ${JSON.stringify(result)}`)
    all.push(result)
  }
  return { ...all[0]!, rounds: all, loadAverages }
}

/** The shop and merchant topics of the memory run, `shops` shops and shops/10 merchants; seeded once per run. */
export function seedMemoryTables(ctx: BenchContext, shops: number): Promise<TableTopics> {
  return seedTables(ctx, 'memory', new SimDataset({ shops, merchants: Math.max(1, Math.round(shops / 10)) }))
}

