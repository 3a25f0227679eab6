import { existsSync, readFileSync, readdirSync } from 'node:fs'
import type avro from 'avsc'
import { parseAvroSchema, type AvroSchemaJson } from './avro-schema-set.ts'

/**
 * Frozen copies of every released version of a schema, as registered:
 * `schemas/avro/released/<Name>/v<N>.avsc` (self-contained). The current schema
 * must stay a BACKWARD-compatible reader of all of them; tests check it locally
 * (avsc resolver) and in the real registry.
 */
export interface ReleasedSchema {
  readonly name: string
  readonly version: number
  readonly schema: AvroSchemaJson
  readonly type: avro.Type
}

export const RELEASED_DIRECTORY = new URL('../avro/released/', import.meta.url)

export function loadReleasedSchemas(name: string, directory: URL = RELEASED_DIRECTORY): ReleasedSchema[] {
  const dir = new URL(`${name}/`, directory)
  if (!existsSync(dir)) return []
  const versions: ReleasedSchema[] = []
  for (const file of readdirSync(dir)) {
    const match = /^v(\d+)\.avsc$/.exec(file)
    if (match === null) {
      throw new Error(`schemas/avro/released/${name}/${file}: released schema files are named v<N>.avsc`)
    }
    const schema = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as AvroSchemaJson
    versions.push({ name, version: Number(match[1]), schema, type: parseAvroSchema(schema) })
  }
  return versions.sort((a, b) => a.version - b.version)
}
