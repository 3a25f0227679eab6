import avro from 'avsc'

interface SchemaAnswer {
  schema: string
  references?: Array<{ name: string; subject: string; version: number }>
}

/**
 * Decodes Confluent-framed Avro values (magic byte 0, 4-byte schema id, Avro
 * body) with schemas fetched by id from the registry's Confluent-compatible API,
 * resolving schema references: written here with avsc rather than borrowed from
 * the pipeline, so a serde bug there cannot hide a bug from the checker.
 */
export class ValueDecoder {
  private readonly types = new Map<number, Promise<avro.Type>>()
  private readonly registryUrl: string
  private readonly headers: Record<string, string>

  /** `auth`: HTTP basic auth of the registry (SCHEMA_REGISTRY_USERNAME/PASSWORD). */
  constructor(registryUrl: string, auth?: { username: string; password: string }) {
    this.registryUrl = registryUrl.replace(/\/+$/, '')
    this.headers = auth === undefined ? {} : { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` }
  }

  async decode(value: Buffer): Promise<Record<string, unknown>> {
    if (value.length < 5 || value[0] !== 0) throw new Error('not Confluent-framed Avro (no magic byte 0)')
    const id = value.readInt32BE(1)
    let type = this.types.get(id)
    if (!type) {
      type = this.load(id)
      this.types.set(id, type)
      type.catch(() => this.types.delete(id))
    }
    return (await type).fromBuffer(value.subarray(5)) as Record<string, unknown>
  }

  private async get(path: string): Promise<SchemaAnswer> {
    const res = await fetch(`${this.registryUrl}${path}`, { headers: this.headers, signal: AbortSignal.timeout(10_000) })
    if (!res.ok) throw new Error(`registry ${path} answered ${res.status}`)
    return (await res.json()) as SchemaAnswer
  }

  private async load(id: number): Promise<avro.Type> {
    const registry: Record<string, avro.Type> = {}
    const addReferences = async (answer: SchemaAnswer) => {
      for (const ref of answer.references ?? []) {
        const referenced = await this.get(`/subjects/${encodeURIComponent(ref.subject)}/versions/${ref.version}`)
        await addReferences(referenced)
        avro.Type.forSchema(JSON.parse(referenced.schema) as avro.Schema, { registry })
      }
    }
    const answer = await this.get(`/schemas/ids/${id}`)
    await addReferences(answer)
    return avro.Type.forSchema(JSON.parse(answer.schema) as avro.Schema, { registry })
  }
}
