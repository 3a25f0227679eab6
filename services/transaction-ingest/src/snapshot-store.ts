import type avro from 'avsc'
import type { Merchant, Shop } from '@tep/schemas'
import type { AvroSnapshot, Snapshot } from './snapshot-table.ts'

/**
 * What readers and writers of one shop or merchant table use of it, whichever
 * store holds it: the compact in-memory table (SnapshotTable) or the LMDB
 * store (LmdbSnapshotTable, INGEST_TABLE_STORE=lmdb). Same semantics: topic
 * records applied in offset order (tombstones delete), API reads in an
 * overlay that answers first unless older than the topic's entry.
 */
export interface SnapshotStore<T extends Snapshot> {
  readonly size: number
  readonly memoryBytes: number
  /** Topic table shards (the compact table after a load by several processes); 1 for LMDB. */
  readonly shards: number
  get(uid: string): T | undefined
  getAvro(uid: string): AvroSnapshot | undefined
  fetchedAtOf(uid: string): number | undefined
  applyFromTopic(uid: string, value: T | null): void
  readsAvro(writer: avro.Type): boolean
  applyAvroFromTopic(key: Buffer, avroBytes: Buffer, offset: number): number | undefined
  putFetched(value: T): boolean
  delete(uid: string): void
}

/** The shop and merchant tables as the lookups see them (either store). */
export interface DetailTables {
  readonly shops: SnapshotStore<Shop>
  readonly merchants: SnapshotStore<Merchant>
}

/** INGEST_TABLE_STORE: which store holds the table. */
export const TABLE_STORES = ['compact', 'lmdb'] as const
export type TableStoreKind = (typeof TABLE_STORES)[number]
