import { readFileSync, readdirSync } from 'node:fs'
import avro from 'avsc'

/**
 * The Avro event contracts in `schemas/avro/*.avsc`, loaded into self-contained schemas.
 *
 * Each file holds one top-level record and may refer to named types defined in
 * another file (EnrichedTransaction refers to tep.events.v1.RawTransaction).
 * That keeps one definition per type in the repository, but the registry and
 * non-JS readers need each subject's schema to stand alone, so references are
 * inlined here: a named type is defined at its first use and referred to by full
 * name afterwards, exactly as Avro's own parsing canonical form expects.
 *
 * avsc's `Type#schema()` is not used for that export because it drops attributes
 * it does not implement (logicalType, enum defaults), which would silently change
 * what gets registered.
 */

export type AvroJson = null | boolean | number | string | AvroJson[] | { [key: string]: AvroJson }
export type AvroSchemaJson = { [key: string]: AvroJson }

export interface LoadedSchema {
  /** Short name, e.g. `RawTransaction`. */
  readonly name: string
  /** Full name, e.g. `tep.events.v1.RawTransaction`. */
  readonly fullName: string
  /** Self-contained schema JSON (every referenced named type inlined), what gets registered. */
  readonly schema: AvroSchemaJson
  /** The schema parsed by avsc, for encoding, decoding and `isValid`. */
  readonly type: avro.Type
}

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'])
const NAMED_KINDS = new Set(['record', 'error', 'enum', 'fixed'])

function isObject(value: AvroJson | undefined): value is AvroSchemaJson {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function qualify(name: string, namespace: string | undefined): string {
  return name.includes('.') || namespace === undefined || namespace === '' ? name : `${namespace}.${name}`
}

function namespaceOf(fullName: string): string | undefined {
  const dot = fullName.lastIndexOf('.')
  return dot < 0 ? undefined : fullName.slice(0, dot)
}

/** Every named type definition anywhere in `schema`, by full name (definitions keep their own namespace). */
function collectDefinitions(
  schema: AvroJson,
  namespace: string | undefined,
  into: Map<string, { definition: AvroSchemaJson; namespace: string | undefined }>,
  file: string,
): void {
  if (Array.isArray(schema)) {
    for (const branch of schema) collectDefinitions(branch, namespace, into, file)
    return
  }
  if (!isObject(schema)) return
  const kind = schema.type
  if (typeof kind === 'string' && NAMED_KINDS.has(kind) && typeof schema.name === 'string') {
    const ns = typeof schema.namespace === 'string' ? schema.namespace : namespace
    const fullName = qualify(schema.name, ns)
    if (into.has(fullName)) {
      throw new Error(
        `Avro type ${fullName} is defined twice (second time in ${file}); define it once and refer to it by name`,
      )
    }
    into.set(fullName, { definition: schema, namespace: ns })
    if ((kind === 'record' || kind === 'error') && Array.isArray(schema.fields)) {
      for (const field of schema.fields) {
        if (isObject(field)) collectDefinitions(field.type ?? null, namespaceOf(fullName), into, file)
      }
    }
    return
  }
  if (kind === 'array') collectDefinitions(schema.items ?? null, namespace, into, file)
  else if (kind === 'map') collectDefinitions(schema.values ?? null, namespace, into, file)
  else if (isObject(kind) || Array.isArray(kind)) collectDefinitions(kind, namespace, into, file)
}

class Inliner {
  private readonly defined = new Set<string>()
  private readonly definitions: Map<string, { definition: AvroSchemaJson; namespace: string | undefined }>

  constructor(definitions: Map<string, { definition: AvroSchemaJson; namespace: string | undefined }>) {
    this.definitions = definitions
  }

  inline(schema: AvroJson, namespace: string | undefined): AvroJson {
    if (Array.isArray(schema)) return schema.map((branch) => this.inline(branch, namespace))
    if (typeof schema === 'string') {
      if (PRIMITIVES.has(schema)) return schema
      const fullName = qualify(schema, namespace)
      if (this.defined.has(fullName)) return fullName
      const found = this.definitions.get(fullName)
      if (found === undefined)
        throw new Error(`Avro type ${fullName} is referred to but defined in no schemas/avro/*.avsc file`)
      return this.inline(found.definition, found.namespace)
    }
    if (!isObject(schema)) return schema
    const kind = schema.type
    if (typeof kind === 'string' && NAMED_KINDS.has(kind) && typeof schema.name === 'string') {
      const ns = typeof schema.namespace === 'string' ? schema.namespace : namespace
      const fullName = qualify(schema.name, ns)
      if (this.defined.has(fullName)) return fullName
      this.defined.add(fullName)
      const copy: AvroSchemaJson = { ...schema, name: fullName }
      delete copy.namespace
      if (Array.isArray(schema.fields)) {
        const childNs = namespaceOf(fullName)
        copy.fields = schema.fields.map((field) =>
          isObject(field) ? { ...field, type: this.inline(field.type ?? null, childNs) } : field,
        )
      }
      return copy
    }
    if (kind === 'array') return { ...schema, items: this.inline(schema.items ?? null, namespace) }
    if (kind === 'map') return { ...schema, values: this.inline(schema.values ?? null, namespace) }
    if (isObject(kind) || Array.isArray(kind)) return { ...schema, type: this.inline(kind, namespace) }
    if (typeof kind === 'string' && !PRIMITIVES.has(kind)) {
      // `{"type": "tep.events.v1.Shop"}` is a reference written as an object.
      return this.inline(kind, namespace)
    }
    return schema
  }
}

/** Parses a self-contained schema with avsc the way this project does everywhere. */
export function parseAvroSchema(schema: AvroSchemaJson): avro.Type {
  return avro.Type.forSchema(schema as avro.Schema)
}

/**
 * Loads every `*.avsc` file of `directory` (non-recursive) and returns one
 * self-contained schema per file, keyed by the file's record name.
 */
export function loadAvroSchemaSet(directory: URL): Map<string, LoadedSchema> {
  const files = readdirSync(directory)
    .filter((f) => f.endsWith('.avsc'))
    .sort()
  const definitions = new Map<string, { definition: AvroSchemaJson; namespace: string | undefined }>()
  const topLevel: { file: string; json: AvroSchemaJson }[] = []
  for (const file of files) {
    const text = readFileSync(new URL(file, directory), 'utf8')
    let json: AvroJson
    try {
      json = JSON.parse(text) as AvroJson
    } catch (err) {
      throw new Error(`schemas/avro/${file} is not valid JSON: ${(err as Error).message}`, { cause: err })
    }
    if (!isObject(json) || json.type !== 'record' || typeof json.name !== 'string') {
      throw new Error(`schemas/avro/${file} must hold one top-level Avro record with a name`)
    }
    if (`${json.name}.avsc` !== file) {
      throw new Error(`schemas/avro/${file} defines record ${json.name}; name the file ${json.name}.avsc`)
    }
    collectDefinitions(json, undefined, definitions, file)
    topLevel.push({ file, json })
  }
  const result = new Map<string, LoadedSchema>()
  for (const { file, json } of topLevel) {
    const schema = new Inliner(definitions).inline(json, undefined)
    if (!isObject(schema)) throw new Error(`schemas/avro/${file} did not inline to a record`)
    let type: avro.Type
    try {
      type = parseAvroSchema(schema)
    } catch (err) {
      throw new Error(`schemas/avro/${file} is not a valid Avro schema: ${(err as Error).message}`, {
        cause: err,
      })
    }
    const name = json.name as string
    result.set(name, { name, fullName: schema.name as string, schema, type })
  }
  return result
}
