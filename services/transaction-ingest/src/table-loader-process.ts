/**
 * Entry of the table loader thread (started by TableReader when it has a
 * `loader` config): reads both compacted topics up to their end offsets into
 * tables of its own, then transfers the tables' buffers, its string pools and
 * where it stopped to the parent thread, and exits. Everything else the load
 * allocated (KafkaJS fetch buffers and message objects, decoded records, a
 * young generation grown by the allocation rate) dies with this thread.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { AvroSerde, createKafka, createSchemaRegistry, type KafkaLogger } from '@tep/kafka'
import { createMerchantTables, merchantTablesTransferables } from './snapshot-table.ts'
import { TableReader, type TableLoaderData, type TableLoaderMessage } from './table-reader.ts'

const port = parentPort
if (port === null) throw new Error('table-load-worker.ts runs only as a worker thread (started by TableReader)')
const data = workerData as TableLoaderData

function post(message: TableLoaderMessage): void {
  try {
    port!.postMessage(message)
  } catch {
    // A log object that does not clone (functions, sockets) still reaches the log as JSON.
    if (message.type === 'log')
      port!.postMessage({ ...message, obj: JSON.parse(JSON.stringify(message.obj, errorReplacer)) as object })
    else if (message.type === 'skipped')
      port!.postMessage({
        ...message,
        error: new Error(message.error instanceof Error ? message.error.message : String(message.error)),
      })
  }
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

const kafka = createKafka(
  { brokers: data.loader.brokers, clientId: `${data.loader.clientId}-table-loader`, logLevel: 'warn' },
  logger,
)
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: data.loader.registryUrl }), logger })
// Only the encoding matters here; the age rule applies where the table is read.
const tables = createMerchantTables({ invalidationsEnabled: true })
const reader = new TableReader({
  kafka,
  tables,
  shops: { topic: data.shopsTopic, codec: serde.topic(data.shopsTopic, 'Shop') },
  merchants: { topic: data.merchantsTopic, codec: serde.topic(data.merchantsTopic, 'Merchant') },
  groupPrefix: `${data.groupPrefix}-loader`,
  logger,
  ...(data.consumer === undefined ? {} : { consumer: data.consumer }),
  fetch: {
    ...(data.loader.maxBytesPerPartition === undefined ? {} : { maxBytesPerPartition: data.loader.maxBytesPerPartition }),
    ...(data.loader.maxBytes === undefined ? {} : { maxBytes: data.loader.maxBytes }),
  },
  freezeWhenCaughtUp: true,
  onSkipped: (topic, error) => post({ type: 'skipped', topic, error }),
})
try {
  await reader.start()
  await reader.whenCaughtUp()
} finally {
  await reader.stop()
}
const state = tables.exportState()
port.postMessage(
  { type: 'loaded', state, positions: reader.positions() } satisfies TableLoaderMessage,
  merchantTablesTransferables(state),
)
