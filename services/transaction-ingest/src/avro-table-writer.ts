import type avro from 'avsc'
import type { SnapshotTable } from './snapshot-table.ts'

/** What the fast path needs of a table (SnapshotTable of either entity). */
type AvroTable = Pick<SnapshotTable<{ uid: string; fetchedAt: number }>, 'readsAvro' | 'applyAvroFromTopic'>

/** Outcome of `AvroTableWriter.apply`. */
export type FastApply =
  /** Applied; the record's fetchedAt. */
  | { applied: number }
  /** Its uid field is not its key: nothing applied. */
  | 'key-mismatch'
  /** Not for this path (another writer schema, not Confluent framing, bytes that do not decode): use avsc. */
  | 'fallback'

const MAGIC = 0
const HEADER = 5

/**
 * The table load's fast path: a record written with the table's own schema
 * goes from its Avro bytes straight into the table's arena
 * (SnapshotTable.applyAvroFromTopic); only records of another writer schema
 * (schema evolution) are decoded by avsc into objects and encoded, and so is
 * anything the fast path does not accept, so that its errors are the usual ones.
 */
export class AvroTableWriter {
  readonly #writerType: (schemaId: number) => Promise<avro.Type>
  /** `${table index}:${schema id}` → whether the writer schema is the table's own. */
  readonly #same = new Map<string, boolean>()
  readonly #tables = new Map<AvroTable, number>()

  constructor(writerType: (schemaId: number) => Promise<avro.Type>) {
    this.#writerType = writerType
  }

  /**
   * Applies a non-null topic record through the fast path when it can,
   * synchronously (millions of records: no promise each); 'unknown-schema'
   * when its writer schema was not looked up yet (`learn`, then again).
   */
  apply(table: AvroTable, key: Buffer, value: Buffer): FastApply | 'unknown-schema' {
    if (value.length < HEADER || value[0] !== MAGIC) return 'fallback'
    const same = this.#same.get(this.#cacheKey(table, value.readInt32BE(1)))
    if (same === undefined) return 'unknown-schema'
    if (!same) return 'fallback'
    let fetchedAt: number | undefined
    try {
      fetchedAt = table.applyAvroFromTopic(key, value, HEADER)
    } catch {
      return 'fallback'
    }
    return fetchedAt === undefined ? 'key-mismatch' : { applied: fetchedAt }
  }

  /** Looks up the writer schema of `value` (a failure is left to the avsc path, which reports or retries it). */
  async learn(table: AvroTable, value: Buffer): Promise<void> {
    const schemaId = value.readInt32BE(1)
    try {
      const writer = await this.#writerType(schemaId)
      this.#same.set(this.#cacheKey(table, schemaId), table.readsAvro(writer))
    } catch {
      // Unknown id, registry down: not remembered.
    }
  }

  #cacheKey(table: AvroTable, schemaId: number): string {
    let index = this.#tables.get(table)
    if (index === undefined) this.#tables.set(table, (index = this.#tables.size))
    return `${index}:${schemaId}`
  }
}
