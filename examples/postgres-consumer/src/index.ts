export { createPostgresMaterializer, ensureSchema, resetOffsets, SCHEMA_SQL } from './postgres-materializer.ts'
export type { PostgresMaterializer, PostgresMaterializerOptions } from './postgres-materializer.ts'
