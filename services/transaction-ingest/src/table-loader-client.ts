import { fork, type ChildProcess } from 'node:child_process'
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { KafkaLogger } from '@tep/kafka'
import { CompactTable } from './compact-table.ts'
import { TableLoadError } from './errors.ts'
import type { MerchantTablesState } from './snapshot-table.ts'
import type { TableReaderOptions } from './table-reader.ts'

/**
 * How the loader process reaches Kafka and the registry. Loading a million
 * records through KafkaJS leaves a large young generation, pooled V8 pages and
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
  /** KafkaJS fetch limits during the load; smaller fetches keep the loader's peak lower. */
  maxBytesPerPartition?: number
  maxBytes?: number
}

/** Next offset to read per `${topic}:${partition}` (only partitions with applied records). */
export type TablePositions = Record<string, string>

/** What the loader process sends its parent. */
export type TableLoaderMessage =
  | { type: 'loaded'; state: MerchantTablesState; files: TableLoaderFiles; positions: TablePositions }
  | { type: 'skipped'; topic: string; error: unknown }
  | { type: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; obj: object; msg?: string }

/** Files the loader wrote the bulk of the state to (arena chunks in order, index arrays, pools as JSON). */
export interface TableLoaderFiles {
  shops: string[]
  merchants: string[]
  shopsSlots?: string
  shopsHashes?: string
  merchantsSlots?: string
  merchantsHashes?: string
  pools?: string
}

/** What the parent sends the loader process first. */
export interface TableLoaderData {
  /** Directory (made and removed by the parent) for the state's files. */
  spoolDir: string
  loader: TableLoaderConfig
  shopsTopic: string
  merchantsTopic: string
  consumer?: TableReaderOptions['consumer']
}

const LOADER_PATH = new URL('./table-loader-process.ts', import.meta.url)

export interface LoadInChildProcessOptions {
  loader: TableLoaderConfig
  shopsTopic: string
  merchantsTopic: string
  consumer?: TableReaderOptions['consumer']
  logger?: KafkaLogger
  onSkipped: (topic: string, error: unknown) => void
  /** The running child (to kill it on stop), then undefined once it exited. */
  onChild: (child: ChildProcess | undefined) => void
  /** Whether the caller stopped (a child ended by the stop hands nothing over, and that is no error). */
  stopped: () => boolean
}

/**
 * Runs the catch-up in the loader process (table-loader-process.ts) and reads
 * what it handed over: the tables' state (arena chunks, index, pools) and its
 * positions; undefined when the caller stopped first.
 */
export async function loadInChildProcess(
  options: LoadInChildProcessOptions,
): Promise<{ state: MerchantTablesState; positions: TablePositions } | undefined> {
  const spoolDir = await mkdtemp(path.join(tmpdir(), 'tep-table-'))
  try {
    return await runLoader(options, spoolDir)
  } finally {
    await rm(spoolDir, { recursive: true, force: true })
  }
}

async function runLoader(
  options: LoadInChildProcessOptions,
  spoolDir: string,
): Promise<{ state: MerchantTablesState; positions: TablePositions } | undefined> {
  const { loader, logger } = options
  const data: TableLoaderData = {
    spoolDir,
    loader,
    shopsTopic: options.shopsTopic,
    merchantsTopic: options.merchantsTopic,
    ...(options.consumer === undefined ? {} : { consumer: options.consumer }),
  }
  // No inherited execArgv (an --inspect port would clash); V8 structured
  // clone on the channel so skipped-record errors arrive as errors.
  const child = fork(LOADER_PATH, [], {
    execArgv: [],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  options.onChild(child)
  const loaded = await new Promise<Extract<TableLoaderMessage, { type: 'loaded' }> | undefined>(
    (resolve, reject) => {
      let result: Extract<TableLoaderMessage, { type: 'loaded' }> | undefined
      child.on('message', (raw) => {
        const m = raw as TableLoaderMessage
        if (m.type === 'loaded') result = m
        else if (m.type === 'skipped') options.onSkipped(m.topic, m.error)
        else logger?.[m.level]({ ...m.obj, process: 'table-loader' }, m.msg)
      })
      child.on('error', (err) =>
        reject(new TableLoadError(`the table loader process could not be run: ${err.message}`, { cause: err })),
      )
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
    },
  ).finally(() => options.onChild(undefined))
  if (loaded === undefined) return undefined
  const { state, files } = loaded
  for (const table of ['shops', 'merchants'] as const) {
    state[table].chunks = files[table].map((file) => readInto(file, new ArrayBuffer(CompactTable.CHUNK_SIZE)))
    const slots = files[`${table}Slots`]
    const hashes = files[`${table}Hashes`]
    if (slots === undefined || hashes === undefined)
      throw new TableLoadError(`the table loader handed over no index for the ${table} table`)
    state[table].slots = new Uint32Array(readInto(slots, new ArrayBuffer(fileSize(slots))))
    state[table].hashes = new Uint32Array(readInto(hashes, new ArrayBuffer(fileSize(hashes))))
  }
  if (files.pools === undefined) throw new TableLoadError('the table loader handed over no string pools')
  state.pools = JSON.parse(readFileSync(files.pools, 'utf8')) as MerchantTablesState['pools']
  return { state, positions: loaded.positions }
}

function fileSize(file: string): number {
  return statSync(file).size
}

/** Reads `file` into the start of `target` with no intermediate buffer. */
function readInto(file: string, target: ArrayBuffer): ArrayBuffer {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    if (size > target.byteLength)
      throw new RangeError(`${file} is ${size} bytes, above the ${target.byteLength} expected`)
    const view = new Uint8Array(target)
    let done = 0
    while (done < size) {
      const n = readSync(fd, view, done, size - done, done)
      if (n === 0) throw new Error(`${file} ended after ${done} of ${size} bytes`)
      done += n
    }
  } finally {
    closeSync(fd)
  }
  return target
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
