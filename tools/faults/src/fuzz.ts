import fc from 'fast-check'
import type { TopicCodec } from '@tep/kafka'
import type { RawTransaction } from '@tep/schemas'
import type { ExtraRecord } from './traffic.ts'

export type FuzzKind = 'randomBytes' | 'unknownSchemaId' | 'absurdValues' | 'emptyValues' | 'oversizedStrings'
export const FUZZ_KINDS: readonly FuzzKind[] = ['randomBytes', 'unknownSchemaId', 'absurdValues', 'emptyValues', 'oversizedStrings']

/** A full card number with a valid Luhn digit: it must never reach a log line. */
export const FUZZ_PAN = '4539578763621486'

const absurdText = fc.oneof(
  fc.constant(''),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', '💳'.repeat(50), '../../etc/passwd', "'; DROP TABLE shops; --", FUZZ_PAN, `card ${FUZZ_PAN} exp 12/29`),
)

/**
 * Bad raw input made by fast-check: random bytes, Confluent frames naming schema
 * ids the registry never issued, and schema-valid RawTransactions with absurd,
 * empty or oversized values (written with the writer schema but without the
 * pipeline's validation, as a buggy upstream would). Each must end with one
 * outcome: a DLQ record with a record-specific reason, or an enriched record
 * (REJECTED or NOT_FOUND) when the values are odd but legal.
 */
export class Fuzzer {
  made = new Map<FuzzKind, number>()
  private seq = 0
  private readonly codec: TopicCodec<RawTransaction>
  private readonly template: RawTransaction
  private readonly prefix: string

  constructor(options: { codec: TopicCodec<RawTransaction>; template: RawTransaction; prefix: string }) {
    this.codec = options.codec
    this.template = options.template
    this.prefix = options.prefix
  }

  async records(count: number): Promise<ExtraRecord[]> {
    const id = await this.codec.register()
    const out: ExtraRecord[] = []
    for (let i = 0; i < count; i++) {
      const kind = FUZZ_KINDS[this.seq % FUZZ_KINDS.length]!
      const key = `${this.prefix}-fuzz-${kind}-${this.seq++}`
      this.made.set(kind, (this.made.get(kind) ?? 0) + 1)
      out.push({ key, value: this.value(kind, key, id) })
    }
    return out
  }

  private value(kind: FuzzKind, key: string, schemaId: number): Buffer {
    const one = <T>(arb: fc.Arbitrary<T>): T => fc.sample(arb, { numRuns: 1, seed: this.seq })[0]!
    switch (kind) {
      case 'randomBytes':
        return Buffer.from(one(fc.uint8Array({ minLength: 0, maxLength: 300 })))
      case 'unknownSchemaId': {
        const header = Buffer.alloc(5)
        header.writeInt32BE(one(fc.integer({ min: 1_000_000, max: 2_000_000_000 })), 1)
        return Buffer.concat([header, Buffer.from(one(fc.uint8Array({ maxLength: 200 })))])
      }
      case 'absurdValues':
      case 'emptyValues':
      case 'oversizedStrings': {
        const base = structuredClone(this.template)
        base.transactionId = key
        const text = kind === 'emptyValues' ? fc.constant('') : kind === 'oversizedStrings' ? fc.string({ minLength: 20_000, maxLength: 200_000 }) : absurdText
        const mutated = one(
          fc.record({
            amount: kind === 'absurdValues' ? fc.oneof(fc.constant('-0'), fc.constant('1e309'), fc.constant('99999999999999999999.999'), fc.string({ maxLength: 12 })) : text,
            currency: text,
            description: text,
            city: text,
            terminalId: text,
            mcc: text,
          }),
        )
        const anyBase = base as unknown as Record<string, unknown>
        for (const field of ['amount', 'currency'] as const) if (field in anyBase) anyBase[field] = mutated[field]
        if (base.card) {
          const card = base.card as unknown as Record<string, unknown>
          for (const field of ['description', 'city', 'terminalId', 'mcc'] as const) if (field in card) card[field] = mutated[field]
          if ('cardBin' in card && kind === 'absurdValues') card.cardBin = FUZZ_PAN
        }
        try {
          const header = Buffer.alloc(5)
          header.writeInt32BE(schemaId, 1)
          return Buffer.concat([header, this.codec.schema.type.toBuffer(base)])
        } catch {
          // The mutation broke the Avro types themselves (a string where a number goes): random bytes after a valid header then.
          const header = Buffer.alloc(5)
          header.writeInt32BE(schemaId, 1)
          return Buffer.concat([header, Buffer.from(one(fc.uint8Array({ maxLength: 100 })))])
        }
      }
    }
  }
}
