import { createWriteStream } from 'node:fs'
import { finished } from 'node:stream/promises'
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import { AvroSerde, scanTopic, type Kafka } from '@tep/kafka'
import type { BackfillInput } from './backfill-input.ts'
import { readRows, type FileFormat } from './file-rows.ts'
import { REJECT_CODES, rowToRaw, RowRejection, validateEvent } from './row-mapping.ts'

export interface DryRunResult {
  rows: number
  rejected: number
  rejectsByCode: Record<string, number>
}

/**
 * Reads and validates every row exactly as a real run would, and writes the
 * rejects file, but produces nothing and calls no API.
 */
export async function dryRun(options: {
  input: BackfillInput
  format: FileFormat | undefined
  kafka: Kafka
  rejectsPath: string
  schemaRegistry: SchemaRegistry
}): Promise<DryRunResult> {
  const out = createWriteStream(options.rejectsPath)
  const result: DryRunResult = { rows: 0, rejected: 0, rejectsByCode: {} }
  const reject = (where: Record<string, unknown>, code: string, reason: string, transactionId: string | null): void => {
    result.rejected += 1
    result.rejectsByCode[code] = (result.rejectsByCode[code] ?? 0) + 1
    out.write(`${JSON.stringify({ ...where, code, reason, transactionId })}\n`)
  }
  try {
    const input = options.input
    if (input.kind === 'file') {
      for await (const row of readRows(input.path, options.format!)) {
        result.rows += 1
        if ('rejection' in row) {
          reject({ line: row.line }, row.rejection.code, row.rejection.message, null)
          continue
        }
        try {
          rowToRaw(row.fields)
        } catch (err) {
          if (!(err instanceof RowRejection)) throw err
          reject({ line: row.line }, err.code, err.message, row.fields.transactionId ?? null)
        }
      }
    } else {
      const codec = new AvroSerde({ registry: options.schemaRegistry }).topic(
        input.topic,
        'RawTransaction',
      )
      const to = input.to.getTime()
      await scanTopic({
        kafka: options.kafka,
        topic: input.topic,
        from: input.from,
        onMessage: async (m, partition) => {
          if (Number(m.timestamp) >= to) return
          result.rows += 1
          const where = { record: `${partition}:${m.offset}` }
          try {
            validateEvent(await codec.decode(m.value))
          } catch (err) {
            if (err instanceof RowRejection) reject(where, err.code, err.message, m.key?.toString('utf8') ?? null)
            else reject(where, REJECT_CODES.undecodable, (err as Error).message, m.key?.toString('utf8') ?? null)
          }
        },
      })
    }
  } finally {
    out.end()
    await finished(out)
  }
  return result
}
