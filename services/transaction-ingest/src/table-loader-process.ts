/**
 * Entry of the table loader process (forked by TableReader when it has a
 * `loader` config): reads both compacted topics up to their end offsets into
 * tables of its own and hands them over to the parent: the arena chunks as
 * they fill and, once caught up, the rest of the state, through the FIFO the
 * parent made (table-handover.ts), then where it stopped over the IPC channel; then it exits.
 * Everything else the load allocated (fetch buffers and message objects,
 * a young generation grown by the allocation rate) goes back to the system
 * with the process. A worker thread is not enough: V8 keeps an exited
 * isolate's pages pooled, and glibc keeps the thread's malloc arenas, both for
 * the life of the process.
 */
import { closeSync, openSync } from 'node:fs'
import { AvroSerde, createKafka, createSchemaRegistry, type KafkaLogger, schemaRegistrySecurityFromEnv } from '@tep/kafka'
import { createMerchantTables } from './snapshot-table.ts'
import { HandoverSender, TABLES } from './table-handover.ts'
import {
  TableReader,
  type TableLoaderData,
  type TableLoaderMessage,
} from './table-reader.ts'

if (process.send === undefined)
  throw new Error(
    'table-loader-process.ts runs only as a child forked by TableReader (it needs an IPC channel)',
  )
// Orphaned (the service was killed): stop at once instead of loading for nobody.
const onOrphaned = (): void => process.exit(1)
process.on('disconnect', onOrphaned)

function send(message: TableLoaderMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    process.send!(message, undefined, {}, (err: Error | null) => (err ? reject(err) : resolve()))
  })
}

function post(message: TableLoaderMessage): void {
  let sendable = message
  try {
    structuredClone(message)
  } catch {
    // A log object that does not clone (functions, sockets) still reaches the log as JSON.
    if (message.type === 'log')
      sendable = { ...message, obj: JSON.parse(JSON.stringify(message.obj, errorReplacer)) as object }
    else if (message.type === 'skipped')
      sendable = {
        ...message,
        error: new Error(message.error instanceof Error ? message.error.message : String(message.error)),
      }
  }
  send(sendable).catch(() => process.exit(1))
}

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value
}

const logger: KafkaLogger = {
  debug: (obj, msg) => post({ type: 'log', level: 'debug', obj, ...(msg === undefined ? {} : { msg }) }),
  info: (obj, msg) => post({ type: 'log', level: 'info', obj, ...(msg === undefined ? {} : { msg }) }),
  warn: (obj, msg) => post({ type: 'log', level: 'warn', obj, ...(msg === undefined ? {} : { msg }) }),
  error: (obj, msg) => post({ type: 'log', level: 'error', obj, ...(msg === undefined ? {} : { msg }) }),
}

const data = await new Promise<TableLoaderData>((resolve) =>
  process.once('message', (m) => resolve(m as TableLoaderData)),
)
// Blocking writes on the thread pool: the load's own thread never waits for the service to read.
const handover = openSync(data.handover, 'w')
const sender = new HandoverSender(handover)
const kafka = createKafka(
  { brokers: data.loader.brokers, clientId: `${data.loader.clientId}-table-loader`, logLevel: 'warn' },
  logger,
)
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: data.loader.registryUrl, ...schemaRegistrySecurityFromEnv(), logger }), logger })
// Only the encoding matters here; the age rule applies where the table is read.
const tables = createMerchantTables({ invalidationsEnabled: true })
const reader = new TableReader({
  kafka,
  tables,
  shops: { topic: data.shopsTopic, codec: serde.topic(data.shopsTopic, 'Shop') },
  merchants: { topic: data.merchantsTopic, codec: serde.topic(data.merchantsTopic, 'Merchant') },
  logger,
  ...(data.consumer === undefined ? {} : { consumer: data.consumer }),
  fetch: {
    ...(data.loader.maxBytesPerPartition === undefined
      ? {}
      : { maxBytesPerPartition: data.loader.maxBytesPerPartition }),
    ...(data.loader.maxBytes === undefined ? {} : { maxBytes: data.loader.maxBytes }),
  },
  follow: false,
  ...(data.partitions === undefined ? {} : { partitions: data.partitions }),
  ...(data.loader.transcode === false ? {} : { writerType: (schemaId: number) => serde.writerType(schemaId) }),
  onSkipped: (topic, error) => post({ type: 'skipped', topic, error }),
  // Nobody would ever hand the table over: fail the parent's start instead of hanging.
  onFatal: (error) => {
    const err = error instanceof Error ? error : new Error(String(error))
    send({
      type: 'log',
      level: 'error',
      obj: { err: { name: err.name, message: err.message } },
      msg: 'the table loader consumer stopped after an error',
    }).finally(() => process.exit(1))
  },
})
// Full chunks go over while the load fills the next ones (the parent copies them on its own core).
const shipping = setInterval(() => {
  for (const table of TABLES) sender.sendFull(table, tables[table].primaryState())
}, 100)
try {
  await reader.start()
  await reader.whenCaughtUp()
} finally {
  clearInterval(shipping)
  await reader.stop()
}
const state = tables.exportState()
for (const table of TABLES) sender.sendRest(table, state[table])
sender.sendPools(state.pools)
await sender.end()
closeSync(handover)
const chunkCounts = { shops: state.shops.chunks.length, merchants: state.merchants.chunks.length }
for (const table of TABLES) {
  state[table].chunks = []
  state[table].slots = new Uint32Array(0)
  state[table].hashes = new Uint32Array(0)
}
state.pools = {}
await send({ type: 'loaded', state, chunkCounts, positions: reader.positions() })
process.off('disconnect', onOrphaned)
process.disconnect()
