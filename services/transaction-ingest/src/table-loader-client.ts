import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { closeSync, constants, openSync } from 'node:fs'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { KafkaLogger } from '@tep/kafka'
import { TableLoadError } from './errors.ts'
import { loaderEnv } from './loader-env.ts'
import type { MerchantTablesState } from './snapshot-table.ts'
import { HandoverReceiver, TABLES, type HandoverState } from './table-handover.ts'

/**
 * How the loader process reaches Kafka and the registry. Loading a million
 * records through a Kafka client leaves a large young generation, pooled V8 pages and
 * malloc'd fetch buffers behind that a process keeps (a worker thread's too);
 * a child process gives them all back when it exits, and only the finished
 * table (its arena bytes, index and string pools) comes over.
 */
export interface TableLoaderConfig {
  brokers: string[]
  clientId: string
  registryUrl: string
  /** Whether the loader transcodes records of the table's own schema (TableReaderOptions.writerType); default true. */
  transcode?: boolean
  /** Fetch limits during the load (TopicReader's); smaller fetches keep the loader's peak lower. */
  maxBytesPerPartition?: number
  maxBytes?: number
  /**
   * Most loader processes for one load (default: the CPUs available, at most
   * 4). A table of many records is split by partition over several processes,
   * each loading its share into a table shard of its own, side by side on
   * their own cores (planLoaderShares decides how many a load gets).
   */
  processes?: number
  /** Fewest records per loader process (default MIN_RECORDS_PER_LOADER, 250,000); lower only to test or tune the split. */
  minRecordsPerProcess?: number
}

/** The consumer settings a table read is given; only `maxWaitTimeInMs` applies (a TopicReader has no group). */
export interface TableConsumerSettings {
  sessionTimeout?: number
  heartbeatInterval?: number
  maxWaitTimeInMs?: number
}

/** A partition of one of the table topics. */
export interface TablePartition {
  topic: string
  partition: number
}

/** Next offset to read per `${topic}:${partition}` (only partitions with applied records). */
export type TablePositions = Record<string, string>

/**
 * What the loader process sends its parent over the IPC channel. The
 * `loaded` state comes without its buffers: those arrive through the
 * hand-over FIFO (table-handover.ts).
 */
export type TableLoaderMessage =
  | ({ type: 'loaded'; state: MerchantTablesState; positions: TablePositions } & HandoverState)
  | { type: 'skipped'; topic: string; error: unknown }
  | { type: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; obj: object; msg?: string }

/** What the parent sends the loader process first. */
export interface TableLoaderData {
  /** The FIFO (made by the parent) to send the tables' bytes through. */
  handover: string
  loader: TableLoaderConfig
  shopsTopic: string
  merchantsTopic: string
  consumer?: TableConsumerSettings
  /** This loader's share of the partitions; undefined: every partition. */
  partitions?: TablePartition[]
}

const LOADER_PATH = new URL('./table-loader-process.ts', import.meta.url)

export interface LoadInChildProcessOptions {
  loader: TableLoaderConfig
  shopsTopic: string
  merchantsTopic: string
  consumer?: TableConsumerSettings
  logger?: KafkaLogger
  onSkipped: (topic: string, error: unknown) => void
  /** A loader process started (`running`: to kill it on stop), or exited. */
  onChild: (child: ChildProcess, running: boolean) => void
  /** Whether the caller stopped (a child ended by the stop hands nothing over, and that is no error). */
  stopped: () => boolean
  /** One share of the partitions per loader process (planLoaderShares); undefined: one process reads every partition. */
  shares?: ReadonlyArray<TablePartition[]>
}

/**
 * Runs the catch-up in loader processes (table-loader-process.ts), one per
 * share, side by side, and takes what they handed over: each one's tables
 * (arena chunks, index, pools: a shard, in share order) and their positions;
 * undefined when the caller stopped first. When one fails, the others are
 * killed and the load fails with its error.
 */
export async function loadInChildProcesses(
  options: LoadInChildProcessOptions,
): Promise<{ states: MerchantTablesState[]; positions: TablePositions } | undefined> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tep-table-'))
  const children = new Set<ChildProcess>()
  try {
    const shares = options.shares ?? [undefined]
    const fifos = shares.map((_, i) => path.join(dir, `handover-${i}`))
    try {
      execFileSync('mkfifo', ['-m', '600', ...fifos], { stdio: ['ignore', 'ignore', 'pipe'] })
    } catch (err) {
      throw new TableLoadError(`could not make the table loader's hand-over FIFO with mkfifo: ${(err as Error).message}`, { cause: err })
    }
    const tracked: LoadInChildProcessOptions = {
      ...options,
      onChild: (child, running) => {
        if (running) children.add(child)
        else children.delete(child)
        options.onChild(child, running)
      },
    }
    const runs = shares.map((share, i) => runLoader(tracked, fifos[i]!, share))
    let loaded: Awaited<ReturnType<typeof runLoader>>[]
    try {
      loaded = await Promise.all(runs)
    } catch (err) {
      // The table cannot be complete: the other loaders stop now, and are waited for.
      for (const child of children) child.kill()
      await Promise.allSettled(runs)
      throw err
    }
    if (loaded.some((l) => l === undefined)) return undefined
    const positions: TablePositions = {}
    for (const l of loaded) Object.assign(positions, l!.positions)
    return { states: loaded.map((l) => l!.state), positions }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

async function runLoader(
  options: LoadInChildProcessOptions,
  fifo: string,
  partitions: TablePartition[] | undefined,
): Promise<{ state: MerchantTablesState; positions: TablePositions } | undefined> {
  const { loader, logger } = options
  const data: TableLoaderData = {
    handover: fifo,
    loader,
    shopsTopic: options.shopsTopic,
    merchantsTopic: options.merchantsTopic,
    ...(options.consumer === undefined ? {} : { consumer: options.consumer }),
    ...(partitions === undefined ? {} : { partitions }),
  }
  // The open waits (on the thread pool) for the loader to open its end.
  const receiver = new HandoverReceiver()
  let opened = false
  const received = open(fifo, 'r').then(async (handle) => {
    opened = true
    try {
      await receiver.readFrom(handle.fd)
    } finally {
      await handle.close()
    }
  })
  // No inherited execArgv (an --inspect port would clash); V8 structured
  // clone on the channel so skipped-record errors arrive as errors.
  // Transparent huge pages for the loader's malloc'd memory (its arena, fetch
  // buffers): a 2 MiB page costs one fault instead of 512, which halves the
  // cost of its fresh memory where faults are slow.
  const child = fork(LOADER_PATH, [], {
    execArgv: [],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // Only what the loader needs (Kafka, registry, runtime): not the enrichment secrets.
    env: { ...loaderEnv(process.env), GLIBC_TUNABLES: withHugePages(process.env.GLIBC_TUNABLES) },
  })
  options.onChild(child, true)
  // Seen below; a loader that broke the hand-over is killed, and its exit says so.
  received.catch(() => child.kill())
  let loaded: Extract<TableLoaderMessage, { type: 'loaded' }> | undefined
  try {
    loaded = await new Promise<Extract<TableLoaderMessage, { type: 'loaded' }> | undefined>((resolve, reject) => {
      let result: Extract<TableLoaderMessage, { type: 'loaded' }> | undefined
      child.on('message', (raw) => {
        const m = raw as TableLoaderMessage
        if (m.type === 'loaded') result = m
        else if (m.type === 'skipped') options.onSkipped(m.topic, m.error)
        else logger?.[m.level]({ ...m.obj, process: 'table-loader' }, m.msg)
      })
      child.on('error', (err) => {
        // The first message sent to a loader that had already died: its exit says why.
        if ((err as NodeJS.ErrnoException).code === 'EPIPE') return
        reject(new TableLoadError(`the table loader process could not be run: ${err.message}`, { cause: err }))
      })
      // Waiting for the exit (not only the message) means its memory is gone before readiness.
      child.on('exit', (code, signal) => {
        if (result !== undefined || options.stopped()) resolve(result)
        else
          reject(
            new TableLoadError(
              `the table loader process exited (${signal ?? `code ${code}`}) before handing over the table; its log lines above say why`,
              { details: { code, signal } },
            ),
          )
      })
      child.send(data)
    })
  } finally {
    options.onChild(child, false)
    // A loader that never opened its end leaves our open waiting: a writer that opens and closes ends it.
    if (!opened) unblockOpen(fifo)
  }
  if (loaded === undefined) {
    await received.catch(() => {})
    return undefined
  }
  await received
  const { state } = loaded
  const parts = receiver.complete(loaded)
  for (const table of TABLES) Object.assign(state[table], parts[table])
  state.pools = parts.pools
  logger?.debug({ handoverBytes: receiver.bytes }, 'table hand-over received')
  return { state, positions: loaded.positions }
}

function unblockOpen(fifo: string): void {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
  } catch {
    // ENXIO: no reader waits any more.
  }
}

/** GLIBC_TUNABLES with malloc's transparent huge pages on (kept as set when the operator chose a value). */
function withHugePages(tunables: string | undefined): string {
  if (tunables === undefined || tunables === '') return 'glibc.malloc.hugetlb=1'
  return tunables.includes('glibc.malloc.hugetlb=') ? tunables : `${tunables}:glibc.malloc.hugetlb=1`
}

/**
 * One memory-reducing full GC right after the hand-over. The pools' JSON and
 * the parse leave ~50 MB of dead heap whose pages V8's memory reducer would
 * give back only after several quiet seconds; this gives them back before the
 * instance reports ready. It is `node --expose-gc`'s `gc()`, made reachable
 * for this one call, so the service needs no V8 flags to be started with.
 */
export function collectLoadGarbage(logger: KafkaLogger | undefined): void {
  try {
    let gc = (globalThis as { gc?: unknown }).gc
    if (typeof gc !== 'function') {
      setFlagsFromString('--expose-gc')
      try {
        gc = runInNewContext('gc') as unknown
      } finally {
        setFlagsFromString('--no-expose-gc')
      }
    }
    if (typeof gc === 'function')
      (gc as (options: object) => void)({ type: 'major', execution: 'sync', flavor: 'last-resort' })
  } catch (err) {
    // Only an optimisation: the memory reducer frees the same pages a little later.
    logger?.warn({ err }, 'could not run a garbage collection after loading the table')
  }
}
