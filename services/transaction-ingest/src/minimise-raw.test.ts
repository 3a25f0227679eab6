import { EnrichmentBadRequestError } from '@tep/enrichment-client'
// The adversarial card-number generators of the masking's own property tests; a
// test-only entry point (fast-check is a devDependency), never in src code.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import { gluedPrefix, gluedSuffix, hostilePan, readableDigits } from '@tep/observability/testing'
import { avroSchemas, exampleRawBankTransfer, exampleRawCardTransaction, type RawTransaction } from '@tep/schemas'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Enricher } from './enricher.ts'
import { Lookups } from './lookups.ts'
import { MerchantDetails } from './merchant-details.ts'
import { MASKED_CARD_FIELDS, MASKED_TRANSFER_FIELDS, minimiseRaw, type PanMaskedPath } from './minimise-raw.ts'
import { createMerchantTables } from './snapshot-table.ts'
import { FakeEnrichment } from './test-fakes.ts'

const PAN = '4111111111111111'
const IBAN = 'CZ6508000000192000145399'

function card(fields: Partial<NonNullable<RawTransaction['card']>>): RawTransaction {
  const raw = exampleRawCardTransaction()
  return { ...raw, card: { ...raw.card!, ...fields } }
}
function transfer(fields: Partial<NonNullable<RawTransaction['transfer']>>): RawTransaction {
  const raw = exampleRawBankTransfer()
  return { ...raw, transfer: { ...raw.transfer!, ...fields } }
}

function build(api: FakeEnrichment) {
  const masked: [PanMaskedPath, number][] = []
  const tables = createMerchantTables({ invalidationsEnabled: true })
  const lookups = new Lookups({ client: api, mode: 'single', batchMax: 500, lingerMs: 1 })
  const details = new MerchantDetails({ tables, client: api, instanceId: 'i' })
  const enricher = new Enricher({ lookups, details, now: () => 42, onMasked: (path, n) => masked.push([path, n]) })
  return { enricher, masked }
}

describe('minimiseRaw', () => {
  it('masks card numbers in the card description, merchant and terminal ids, and returns the same object when there are none', () => {
    const raw = card({ description: `${PAN} SHOP PRAHA`, merchantId: `M${PAN}`, terminalId: '4111-1111-1111-1111' })
    const { raw: out, masked } = minimiseRaw(raw)
    expect(masked).toBe(3)
    expect(out.card).toMatchObject({ description: '411111******1111 SHOP PRAHA', merchantId: 'M411111******1111', terminalId: '4111-11**-****-1111' })
    expect(raw.card!.description).toBe(`${PAN} SHOP PRAHA`)
    const clean = exampleRawCardTransaction()
    expect(minimiseRaw(clean).raw).toBe(clean)
  })

  it('keeps a 15-digit DE 42 merchant id as it is, unless it is a 15-digit card number (American Express, UATP)', () => {
    // 401001234567896 holds Luhn-valid windows; it is the simulator's shape of a merchant id.
    expect(minimiseRaw(card({ merchantId: '401001234567896' })).masked).toBe(0)
    expect(minimiseRaw(card({ merchantId: '378282246310005' })).raw.card!.merchantId).toBe('378282*****0005')
    expect(minimiseRaw(card({ merchantId: '4010012345678960' })).masked).toBeGreaterThan(0)
  })

  it('masks the transfer message and counterparty name, and keeps the counterparty IBAN (a lookup key)', () => {
    const raw = transfer({ message: `card 4111 1111 1111 1111`, counterpartyName: `JAN ${PAN}`, counterpartyIban: IBAN })
    const out = minimiseRaw(raw).raw.transfer!
    expect(out.message).toBe('card 4111 11** **** 1111')
    expect(out.counterpartyName).toBe('JAN 411111******1111')
    expect(out.counterpartyIban).toBe(IBAN)
  })
})

describe('Enricher minimisation', () => {
  it('sends no card number to the enrichment API and writes none into the enriched event, and counts them', async () => {
    const api = new FakeEnrichment()
    const { enricher, masked } = build(api)
    const { enriched } = await enricher.enrich(card({ description: `${PAN} SHOP PRAHA` }))
    expect(JSON.stringify(api.calls)).not.toContain(PAN)
    expect(enriched.raw.card!.description).toBe('411111******1111 SHOP PRAHA')
    expect(masked).toEqual([['enrichment-input', 1]])

    await enricher.enrich(transfer({ message: `ref ${PAN}` }))
    expect(JSON.stringify(api.calls)).not.toContain(PAN)
  })

  it('masks card numbers and IBANs in the reject reason the API gives', async () => {
    const api = new FakeEnrichment()
    api.transfer = async (scheme) => {
      throw new EnrichmentBadRequestError(`iban ${IBAN} EUR refused`, {
        operation: `findByBankTransfer.${scheme}`,
        status: 400,
        apiError: { code: 'INVALID_PARAMETER', message: `iban ${IBAN} EUR refused for card ${PAN}`, parameter: 'iban' },
      })
    }
    const { enricher, masked } = build(api)
    const { enriched } = await enricher.enrich(transfer({ counterpartyIban: IBAN }))
    expect(enriched.status).toBe('REJECTED')
    expect(enriched.rejectReason!.message).not.toContain(IBAN)
    expect(enriched.rejectReason!.message).not.toContain(PAN)
    expect(enriched.rejectReason!.message).toContain('CZ******************5399 EUR')
    expect(masked).toEqual([['reject-reason', 2]])
    // The IBAN stays in the raw event: a lookup key (docs/security.md).
    expect(enriched.raw.transfer!.counterpartyIban).toBe(IBAN)
  })

  it('never lets a card number written adversarially reach the API or the enriched record, in any masked field (property)', async () => {
    const rawType = avroSchemas.RawTransaction.type
    const field = fc.oneof(
      fc.constantFrom(...MASKED_CARD_FIELDS).map((f) => ['card', f] as const),
      fc.constantFrom(...MASKED_TRANSFER_FIELDS).map((f) => ['transfer', f] as const),
    )
    const api = new FakeEnrichment()
    const { enricher } = build(api)
    await fc.assert(
      fc.asyncProperty(field, gluedPrefix, hostilePan, gluedSuffix, async ([kind, name], before, { digits, text }, after) => {
        api.calls.length = 0
        const value = before + text + after
        const raw = kind === 'card' ? card({ [name]: value }) : transfer({ [name]: value })
        const { enriched } = await enricher.enrich(raw)
        expect(readableDigits(JSON.stringify(api.calls))).not.toContain(digits)
        // What the enriched topic would hold of the raw event: its Avro encoding, every string read back.
        const back = rawType.fromBuffer(rawType.toBuffer(enriched.raw)) as RawTransaction
        const strings = [...Object.values(back.card ?? {}), ...Object.values(back.transfer ?? {})].filter((v) => typeof v === 'string')
        for (const s of strings) expect(readableDigits(s), `${kind}.${name}`).not.toContain(digits)
      }),
      { numRuns: 500 },
    )
  })
})
