import { AvroSerde, confluentFrame, createSchemaRegistry, SchemaRegistryUnavailableError } from '@tep/kafka'
import avro from 'avsc'
import { describe, expect, it } from 'vitest'
import { showRecord } from './show.ts'
import { entry } from './test-entries.ts'

const PAN = '4111111111111111'
const type = avro.Type.forSchema({ type: 'record', name: 'R', fields: [{ name: 'description', type: 'string' }, { name: 'n', type: 'long' }] })
/** A serde whose registry knows schema id 7 only; `down` makes every lookup fail as an unreachable registry does. */
function serde(down = false): AvroSerde {
  const s = new AvroSerde({ registry: createSchemaRegistry({ url: 'http://127.0.0.1:1' }) })
  s.writerType = async (id: number) => {
    if (down) throw new SchemaRegistryUnavailableError('schema registry unavailable', new Error('ECONNREFUSED'), { schemaId: id })
    if (id === 7) return type
    throw new Error(`schema id ${id} is unknown to the schema registry`)
  }
  return s
}

describe('showRecord', () => {
  it('decodes Avro with the writer schema and masks card numbers in the value, key and headers', async () => {
    const e = entry(1, 'RAW_INVALID_FIELD', 0, {
      key: Buffer.from(`key ${PAN}`),
      value: confluentFrame(7, type.toBuffer({ description: `paid with ${PAN}`, n: 3 })),
      headers: { 'dlq.error.message': Buffer.from(`card ${PAN} refused`) },
    })
    const shown = await showRecord(e, serde())
    // The mask's exact form is @tep/observability's; what matters here is that the number is gone.
    expect(shown.value).toMatchObject({ encoding: 'avro', schemaId: 7, content: { description: expect.stringMatching(/^paid with /), n: 3 } })
    expect(JSON.stringify(shown)).not.toContain(PAN)
    expect(shown.key).toMatch(/^key /)
  })

  it('shows the pipeline\'s own position and time headers as they are, even a timestamp the masker would take for a card number', async () => {
    // 4222222222222 passes the Luhn check: as content it is masked, as dlq.source.timestamp it is a time.
    const e = entry(1, 'X', 0, { value: null, headers: { 'dlq.source.timestamp': Buffer.from('4222222222222'), 'dlq.error.message': Buffer.from('near 4222222222222') } })
    const shown = await showRecord(e, serde())
    expect(shown.headers['dlq.source.timestamp']).toBe('4222222222222')
    expect(shown.headers['dlq.error.message']).not.toContain('4222222222222')
  })

  it('shows a value the registry cannot decode as masked text or hex, saying why', async () => {
    const framed = await showRecord(entry(1, 'AVRO_UNKNOWN_SCHEMA_ID', 0, { value: confluentFrame(9, Buffer.from([1, 2])) }), serde())
    expect(framed.value).toMatchObject({ encoding: 'hex', schemaId: 9, content: '000000000901 02'.replace(' ', ''), undecoded: 'schema id 9 is unknown to the schema registry' })
    const text = await showRecord(entry(1, 'AVRO_BAD_MAGIC_BYTE', 0, { value: Buffer.from(`{"pan":"${PAN}"}`) }), serde())
    expect(text.value).toMatchObject({ encoding: 'text', content: expect.stringMatching(/^\{"pan":"/) })
    expect(JSON.stringify(text)).not.toContain(PAN)
  })

  it('fails when the registry cannot be reached instead of showing bytes as if they did not decode', async () => {
    const e = entry(1, 'X', 0, { value: confluentFrame(7, Buffer.from([0])) })
    await expect(showRecord(e, serde(true))).rejects.toThrow(SchemaRegistryUnavailableError)
  })
})
