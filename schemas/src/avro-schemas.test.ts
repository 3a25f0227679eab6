import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import avro from 'avsc'
import { describe, expect, it } from 'vitest'
import { loadAvroSchemaSet, parseAvroSchema, type AvroJson, type AvroSchemaJson } from './avro-schema-set.ts'
import { avroSchemas, SCHEMA_NAMES } from './index.ts'
import { loadReleasedSchemas } from './released-schemas.ts'

/** Every field of every record in a schema, with the record it belongs to. */
function fieldsOf(schema: AvroJson, out: { record: string; field: AvroSchemaJson }[] = []): typeof out {
  if (Array.isArray(schema)) schema.forEach((s) => fieldsOf(s, out))
  else if (typeof schema === 'object' && schema !== null) {
    if (schema.type === 'record' && Array.isArray(schema.fields)) {
      for (const f of schema.fields as AvroSchemaJson[]) {
        out.push({ record: String(schema.name), field: f })
        fieldsOf(f.type ?? null, out)
      }
    } else {
      for (const key of ['type', 'items', 'values'] as const)
        if (key in schema) fieldsOf(schema[key] ?? null, out)
    }
  }
  return out
}

describe('current Avro schemas', () => {
  it.each(SCHEMA_NAMES)('%s stands alone: it parses without any other schema', (name) => {
    const { schema, fullName } = avroSchemas[name]
    expect(fullName).toBe(`tep.events.v1.${name}`)
    // A fresh parse with no shared registry fails on any dangling type reference.
    expect(() => avro.Type.forSchema(JSON.parse(JSON.stringify(schema)) as avro.Schema)).not.toThrow()
  })

  it.each(SCHEMA_NAMES)('%s documents itself and every field', (name) => {
    const { schema } = avroSchemas[name]
    expect(typeof schema.doc).toBe('string')
    const undocumented = fieldsOf(schema)
      .filter(({ field }) => typeof field.doc !== 'string' || field.doc.length < 10)
      .map(({ record, field }) => `${record}.${String(field.name)}`)
    expect(undocumented).toEqual([])
  })

  it('keeps logical types in the registered JSON (avsc would drop them on export)', () => {
    const occurredAt = fieldsOf(avroSchemas.RawTransaction.schema).find(
      ({ field }) => field.name === 'occurredAt',
    )
    expect(occurredAt?.field.type).toEqual({ type: 'long', logicalType: 'timestamp-millis' })
  })

  it('types every optional raw input string as ["null","string"] with default null (absent-versus-empty rule)', () => {
    const inputs = fieldsOf(avroSchemas.RawTransaction.schema).filter(({ record }) =>
      ['tep.events.v1.CardTransaction', 'tep.events.v1.BankTransfer'].includes(record),
    )
    expect(inputs.length).toBeGreaterThan(25)
    const wrong = inputs
      .filter(({ field }) => field.name !== 'scheme')
      .filter(({ field }) => JSON.stringify(field.type) !== '["null","string"]' || field.default !== null)
      .map(({ field }) => field.name)
    expect(wrong).toEqual([])
    // An empty string and null are different values on the wire.
    const card = avroSchemas.RawTransaction.type
    const base = {
      transactionId: 't',
      source: 'CARD_PROCESSOR',
      sourceReference: null,
      customerId: null,
      accountId: null,
      occurredAt: 1,
      receivedAt: 1,
      amount: '1',
      currency: 'CZK',
      creditDebit: 'DEBIT',
      refresh: false,
      transfer: null,
    }
    const cardFields = Object.fromEntries(
      inputs
        .filter(({ record }) => record.endsWith('CardTransaction'))
        .map(({ field }) => [field.name, null]),
    )
    const absent = card.fromBuffer(card.toBuffer({ ...base, card: { ...cardFields } })) as {
      card: Record<string, unknown>
    }
    const empty = card.fromBuffer(card.toBuffer({ ...base, card: { ...cardFields, terminalId: '' } })) as {
      card: Record<string, unknown>
    }
    expect(absent.card.terminalId).toBeNull()
    expect(empty.card.terminalId).toBe('')
  })

  it('has no field that could carry a full card number', () => {
    const names = fieldsOf(avroSchemas.RawTransaction.schema).map(({ field }) =>
      String(field.name).toLowerCase(),
    )
    expect(names.filter((n) => /pan|cardnumber/.test(n))).toEqual([])
  })
})

describe('released versions', () => {
  it.each(SCHEMA_NAMES)(
    '%s has a released v1 and the current schema reads every released version',
    (name) => {
      const released = loadReleasedSchemas(name)
      expect(released.map((r) => r.version)[0]).toBe(1)
      const reader = avroSchemas[name].type
      for (const { type: writer, version } of released) {
        // BACKWARD: the current schema must resolve data written with any released version.
        expect(
          () => reader.createResolver(writer),
          `${name} cannot read its released v${version}`,
        ).not.toThrow()
      }
    },
  )

  it('the resolver check rejects an incompatible change (a new field without a default)', () => {
    const v1 = avroSchemas.Invalidation.schema
    const fields = v1.fields as AvroSchemaJson[]
    const broken = parseAvroSchema({
      ...v1,
      fields: [...fields, { name: 'mandatory', type: 'string', doc: 'no default' }],
    })
    const compatible = parseAvroSchema({
      ...v1,
      fields: [...fields, { name: 'optional', type: ['null', 'string'], default: null, doc: 'default' }],
    })
    const writer = parseAvroSchema(v1)
    expect(() => broken.createResolver(writer)).toThrow(/mandatory/)
    expect(() => compatible.createResolver(writer)).not.toThrow()
  })
})

describe('loadAvroSchemaSet', () => {
  function dirWith(files: Record<string, unknown>): URL {
    const dir = mkdtempSync(join(tmpdir(), 'tep-avro-'))
    for (const [name, json] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(json))
    return pathToFileURL(`${dir}/`)
  }

  it('inlines a type from another file at its first use and refers to it by name afterwards', () => {
    const set = loadAvroSchemaSet(
      dirWith({
        'Inner.avsc': {
          type: 'record',
          name: 'Inner',
          namespace: 'n',
          fields: [{ name: 'x', type: { type: 'enum', name: 'E', symbols: ['A'] } }],
        },
        'Outer.avsc': {
          type: 'record',
          name: 'Outer',
          namespace: 'n',
          fields: [
            { name: 'a', type: 'Inner' },
            { name: 'b', type: ['null', 'n.Inner'], default: null },
            { name: 'e', type: 'n.E' },
          ],
        },
      }),
    )
    const outer = set.get('Outer')!.schema
    const fields = outer.fields as AvroSchemaJson[]
    expect((fields[0]!.type as AvroSchemaJson).name).toBe('n.Inner')
    expect(fields[1]!.type).toEqual(['null', 'n.Inner'])
    expect(fields[2]!.type).toBe('n.E')
  })

  it('names the file and the type when a reference is dangling', () => {
    const dir = dirWith({
      'Outer.avsc': {
        type: 'record',
        name: 'Outer',
        namespace: 'n',
        fields: [{ name: 'a', type: 'n.Missing' }],
      },
    })
    expect(() => loadAvroSchemaSet(dir)).toThrow(/n\.Missing is referred to but defined in no/)
  })

  it('refuses a file whose name differs from its record', () => {
    const dir = dirWith({ 'Wrong.avsc': { type: 'record', name: 'Right', fields: [] } })
    expect(() => loadAvroSchemaSet(dir)).toThrow(/name the file Right\.avsc/)
  })
})
