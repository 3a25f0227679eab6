import { loadAvroSchemaSet, type LoadedSchema } from './avro-schema-set.ts'
import type { EventTypes } from './event-types.ts'

export type {
  AccountSyncState,
  SeenEntry,
  BankTransaction,
  BankTransactionChangeType,
  BankTransactionStatus,
  BackfillMarker,
  BankTransfer,
  CardTransaction,
  Consent,
  ConsentStatus,
  CreditDebit,
  EnrichedTransaction,
  EnrichmentStatus,
  EpochMillis,
  EventTypes,
  Invalidation,
  InvalidationCursor,
  LookupInfo,
  Merchant,
  MerchantDataFetched,
  MerchantEntityType,
  RawTransaction,
  RejectReason,
  Shop,
  ShopAddress,
  ShopCategory,
  ShopCoordinates,
  ShopLocation,
} from './event-types.ts'
export type { AvroJson, AvroSchemaJson, LoadedSchema } from './avro-schema-set.ts'
export { loadAvroSchemaSet, parseAvroSchema } from './avro-schema-set.ts'
export { loadReleasedSchemas, RELEASED_DIRECTORY } from './released-schemas.ts'
export type { ReleasedSchema } from './released-schemas.ts'
export { keySubject, valueSubject } from './subjects.ts'
export { rawTransactionProblems } from './raw-transaction-rules.ts'
export { CORRECTION_HANDLE_INVALIDATED, CORRECTION_HEADER, UNKNOWN_LEVEL } from './event-conventions.ts'

/** Names of the event schemas in `schemas/avro/` (one file each). */
export const SCHEMA_NAMES = [
  'RawTransaction',
  'EnrichedTransaction',
  'Shop',
  'Merchant',
  'Invalidation',
  'InvalidationCursor',
  'MerchantDataFetched',
  'Consent',
  'BankTransaction',
] as const satisfies readonly (keyof EventTypes)[]

export type SchemaName = (typeof SCHEMA_NAMES)[number]

/** Where the `.avsc` files live. */
export const AVRO_DIRECTORY = new URL('../avro/', import.meta.url)

function loadAll(): Record<SchemaName, LoadedSchema> {
  const loaded = loadAvroSchemaSet(AVRO_DIRECTORY)
  const out = {} as Record<SchemaName, LoadedSchema>
  for (const name of SCHEMA_NAMES) {
    const schema = loaded.get(name)
    if (schema === undefined) throw new Error(`schemas/avro/${name}.avsc is missing`)
    out[name] = schema
  }
  const unknown = [...loaded.keys()].filter((n) => !(SCHEMA_NAMES as readonly string[]).includes(n))
  if (unknown.length > 0) {
    throw new Error(
      `schemas/avro has schemas not listed in SCHEMA_NAMES: ${unknown.join(', ')}; add them to @tep/schemas`,
    )
  }
  return out
}

/** Every event schema, loaded once: self-contained JSON (what is registered) plus the avsc Type. */
export const avroSchemas: Readonly<Record<SchemaName, LoadedSchema>> = loadAll()

/** One event schema by name. */
export function avroSchema(name: SchemaName): LoadedSchema {
  return avroSchemas[name]
}
export {
  exampleBankTransaction,
  exampleBankTransfer,
  exampleCardTransaction,
  exampleConsent,
  exampleEnrichedTransaction,
  exampleInvalidation,
  exampleInvalidationCursor,
  exampleMerchant,
  exampleMerchantDataFetched,
  exampleRawBankTransfer,
  exampleRawCardTransaction,
  exampleShop,
} from './example-events.ts'
