import { afterAll, describe, expect, inject, it } from 'vitest'
import { createSchemaRegistry, registerSubjectSchema, SchemaRegistrationError } from '@tep/kafka'
import { avroSchemas, loadReleasedSchemas, SCHEMA_NAMES, type AvroSchemaJson } from '@tep/schemas'
import { uniqueName } from '../support/kafka-test-kit.ts'

const registryUrl = inject('registryUrl')
const registry = createSchemaRegistry({ url: registryUrl })
const subjects: string[] = []

afterAll(async () => {
  // Test subjects only; the registry is shared with other tests and tools.
  for (const subject of subjects) {
    await fetch(`${registryUrl}/subjects/${encodeURIComponent(subject)}`, { method: 'DELETE' }).catch(
      () => undefined,
    )
  }
})

function freshSubject(name: string): string {
  const subject = `${uniqueName(`compat-${name}`)}-value`
  subjects.push(subject)
  return subject
}

describe('every event schema registers with BACKWARD compatibility after its released versions', () => {
  it.each(SCHEMA_NAMES)('%s', async (name) => {
    const released = loadReleasedSchemas(name)
    expect(released.length).toBeGreaterThan(0)
    const subject = freshSubject(name)
    for (const version of released) await registerSubjectSchema(registry, subject, version.schema)
    const id = await registerSubjectSchema(registry, subject, avroSchemas[name].schema)
    expect(id).toBeGreaterThan(0)
    const config = (await (await fetch(`${registryUrl}/config/${encodeURIComponent(subject)}`)).json()) as {
      compatibilityLevel: string
    }
    expect(config.compatibilityLevel).toBe('BACKWARD')
  })
})

describe('instances starting together', () => {
  it('all register a fresh subject, though each finds no compatibility level and sets it (the later ones meet a 409)', async () => {
    // The window is narrow (both read "no level" before either writes): several subjects, many callers each.
    for (let round = 0; round < 6; round++) {
      const subject = freshSubject(`together-${round}`)
      const ids = await Promise.all(
        Array.from({ length: 16 }, () => registerSubjectSchema(registry, subject, avroSchemas.Invalidation.schema)),
      )
      expect(new Set(ids).size).toBe(1)
      const config = (await (await fetch(`${registryUrl}/config/${encodeURIComponent(subject)}`)).json()) as {
        compatibilityLevel: string
      }
      expect(config.compatibilityLevel).toBe('BACKWARD')
    }
  })
})

describe('the registry check is real', () => {
  it('refuses a version that cannot read the previous one (a new field without a default)', async () => {
    const subject = freshSubject('broken')
    const v1 = avroSchemas.Invalidation.schema
    await registerSubjectSchema(registry, subject, v1)
    const broken: AvroSchemaJson = {
      ...v1,
      fields: [
        ...(v1.fields as AvroSchemaJson[]),
        { name: 'mandatory', type: 'string', doc: 'no default: old records have no value for it' },
      ],
    }
    const error = await registerSubjectSchema(registry, subject, broken).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SchemaRegistrationError)
    expect((error as SchemaRegistrationError).retriable).toBe(false)
    expect((error as Error).message).toMatch(/status 409/)
  })

  it('accepts the same change when the new field has a default', async () => {
    const subject = freshSubject('evolved')
    const v1 = avroSchemas.Invalidation.schema
    await registerSubjectSchema(registry, subject, v1)
    const evolved: AvroSchemaJson = {
      ...v1,
      fields: [
        ...(v1.fields as AvroSchemaJson[]),
        { name: 'optional', type: ['null', 'string'], default: null, doc: 'defaulted' },
      ],
    }
    await expect(registerSubjectSchema(registry, subject, evolved)).resolves.toBeGreaterThan(0)
  })
})
