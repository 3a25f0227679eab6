import { createTransactionalWriter, type Kafka, type KafkaLogger, type OutgoingMessage } from '@tep/kafka'
import { stateMessage, type BackfillState, type BackfillTopics } from './backfill-topics.ts'
import { readRows, type FileFormat, type FileRow } from './file-rows.ts'

/** A row as stored in the rows topic (JSON). */
export type StagedRow =
  | { line: number; fields: Record<string, string | null> }
  | { line: number; rejection: { code: string; message: string } }

export interface LoadFileOptions {
  kafka: Kafka
  topics: BackfillTopics
  partitions: number
  path: string
  format: FileFormat
  /** Where the last run stopped (from the state topic). */
  state: BackfillState
  /** Rows per Kafka transaction; default 1 000. */
  rowsPerTransaction?: number
  logger?: KafkaLogger
  signal?: AbortSignal
  onLoaded?: (state: BackfillState) => void
  /** Runs each chunk's transaction; the backfill passes its LiveGuard's slot, so loading yields too. */
  throttle?: <T>(work: () => Promise<T>) => Promise<T>
}

/**
 * Copies the file's rows after `state.loadedThroughLine` into the rows topic.
 * Each chunk of rows and the advanced cursor are one Kafka transaction, so after
 * a crash the topic holds exactly the rows up to the committed cursor and the
 * next run continues at the line after it: no row twice, none missing. The
 * transactional id is the backfill's own, so a run still alive somewhere is
 * fenced by the new one.
 */
export async function loadFile(options: LoadFileOptions): Promise<BackfillState> {
  const { kafka, topics, partitions } = options
  const perTxn = options.rowsPerTransaction ?? 1_000
  let state = { ...options.state }
  if (state.loadComplete) return state
  const writer = createTransactionalWriter(kafka, {
    transactionalId: `backfill-${state.backfillId}-loader`,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  })
  try {
    let chunk: FileRow[] = []
    const flush = async (complete: boolean): Promise<void> => {
      const last = chunk.at(-1)
      const next: BackfillState = {
        ...state,
        loadedThroughLine: last?.line ?? state.loadedThroughLine,
        loadedRows: state.loadedRows + chunk.length,
        loadComplete: complete,
      }
      const messages: OutgoingMessage[] = chunk.map((row) => ({
        key: String(row.line),
        value: Buffer.from(JSON.stringify(row satisfies StagedRow)),
        // Spread by line so that the enrichment step works on several partitions at once.
        partition: row.line % partitions,
      }))
      const write = () =>
        writer.run(async (tx) => {
          if (messages.length > 0) await tx.send(topics.rows, messages)
          await tx.send(topics.state, [stateMessage(next)])
        })
      await (options.throttle === undefined ? write() : options.throttle(write))
      state = next
      chunk = []
      options.onLoaded?.(state)
    }
    for await (const row of readRows(options.path, options.format, state.loadedThroughLine)) {
      chunk.push(row)
      if (chunk.length >= perTxn) await flush(false)
      if (options.signal?.aborted === true) return state
    }
    await flush(true)
    return state
  } finally {
    await writer.close()
  }
}
