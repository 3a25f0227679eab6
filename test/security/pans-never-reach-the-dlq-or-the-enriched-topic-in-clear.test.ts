/**
 * Card numbers produced into the raw topic, written every way the third security
 * review found in clear (grouped by any separator, fullwidth digits, glued to
 * letters and digits, split by newlines), as undecodable text records and as
 * valid Avro records (descriptions of 25-28 characters starting with the card
 * number: the zig-zag length byte before them is an ASCII digit), reach neither
 * the DLQ nor the enriched topic in clear, with the real ingest running against
 * the simulator, broker and registry.
 *
 * The check is independent of the masker under test: a scanner written here reads
 * the raw bytes of every record (key, value, headers) as UTF-8, turns every Unicode
 * digit into ASCII, and looks for each card number produced and, on the DLQ (whose
 * records hold no other digits than those produced), for any Luhn-valid 13-19 digit
 * window of a run of digits and separators.
 */
import type { RecordHeaders } from '@tep/kafka'
import type { RawTransaction } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  encodeUnchecked,
  fetchSamples,
  rawFromSample,
  useIngestWorld,
} from '../ingest/ingest-harness.ts'

/** Luhn-valid test numbers of 13 to 19 digits (brands' published test cards, and two made up to complete the lengths). */
const PANS = [
  '4111111111111111',
  '5555555555554444',
  '378282246310005',
  '4222222222222',
  '6011111111111117',
  '36227206271667',
  '4000056655665556',
  '30569309025904',
  '6304000000000000018',
  '62123456789012347',
]

/** The surroundings of the review: `d` is the card number in ASCII digits. */
const WRITINGS: ((d: string) => string)[] = [
  (d) => d,
  (d) => group(d, '.'),
  (d) => group(d, '/'),
  (d) => group(d, '_'),
  (d) => group(d, ':'),
  (d) => group(d, ','),
  (d) => group(d, '\t'),
  (d) => group(d, '\u00a0'),
  (d) => group(d, '\u2009'),
  (d) => group(d, '\u2013'),
  (d) => group(d, '  '),
  (d) => group(d, '\u200d'),
  (d) => group(d, '\n'),
  (d) => [...d].map((c) => String.fromCharCode(0xff10 + Number(c))).join(''),
  (d) => `7${d}`,
  (d) => `SHOP${d}PRAHA`,
  (d) => `${d}12/27`,
]

function group(digits: string, sep: string): string {
  return digits.replace(/(.{4})(?=.)/g, `$1${sep}`)
}

/** Every Unicode digit as its ASCII digit (NFKC, or its place in a \p{Nd} set). */
function asciiDigit(ch: string): string | undefined {
  const n = ch.normalize('NFKC')
  if (/^[0-9]$/.test(n)) return n
  if (!/^\p{Nd}$/u.test(ch)) return undefined
  let back = 0
  while (back < 60 && /^\p{Nd}$/u.test(String.fromCodePoint(ch.codePointAt(0)! - back - 1))) back++
  return String(back % 10)
}

/**
 * The bytes as a reader sees them: digits, '|' where a letter, a masking '*' or a
 * control character stands (it ends a number), and nothing for anything else
 * (spaces, punctuation, zero-width characters: a person reads through them).
 */
function readable(bytes: Buffer): string {
  let out = ''
  for (const ch of bytes.toString('utf8')) {
    const d = asciiDigit(ch)
    if (d !== undefined) out += d
    else if (/[\p{L}*]/u.test(ch) || isControl(ch)) out += '|'
  }
  return out
}

/** A control character other than whitespace (Avro's branch and length bytes of short strings). */
function isControl(ch: string): boolean {
  const c = ch.charCodeAt(0)
  return (c < 0x20 && !(c >= 0x09 && c <= 0x0d)) || c === 0x7f
}

function luhn(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2
    sum += d
  }
  return sum % 10 === 0
}

/** Every Luhn-valid window of 13-19 digits in `text` (a readable() projection). */
function luhnWindows(text: string): string[] {
  const found: string[] = []
  for (const run of text.split('|'))
    for (let s = 0; s + 13 <= run.length; s++)
      for (let e = s + 13; e <= Math.min(run.length, s + 19); e++) if (luhn(run.slice(s, e))) found.push(run.slice(s, e))
  return found
}

function headerBytes(headers: RecordHeaders): Buffer[] {
  return Object.values(headers)
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .filter((v) => v !== undefined)
    .map((v) => (Buffer.isBuffer(v) ? v : Buffer.from(String(v))))
}

const world = useIngestWorld(34)
const { kit, serde } = world

describe('card numbers in raw events', () => {
  it('appear in clear neither on the DLQ nor on the enriched topic, as text records or as Avro records', async () => {
    const topics = await createIngestTopics(kit, 'pans-in-clear', 2)
    const [cards, transfers] = await Promise.all([
      fetchSamples(world.sim, 'card', 'found', 10, 34),
      fetchSamples(world.sim, 'transfer', 'found', 5, 34),
    ])
    const card = rawFromSample(cards[0]!, 'template-card')
    const transfer = rawFromSample(transfers[0]!, 'template-transfer')
    const valid: RawTransaction[] = []
    const invalid: RawTransaction[] = []
    const text: { key: string; value: Buffer }[] = []
    let n = 0
    for (const pan of PANS) {
      for (const [w, write] of WRITINGS.entries()) {
        const written = write(pan)
        const id = (kind: string) => `pan-${n++}-${kind}`
        // Valid events: enriched, free text minimised.
        valid.push({ ...card, transactionId: id('description'), card: { ...card.card!, description: `${written} SHOP PRAHA` } })
        valid.push({ ...transfer, transactionId: id('message'), transfer: { ...transfer.transfer!, message: `ref ${written} end` } })
        valid.push({ ...transfer, transactionId: id('name'), transfer: { ...transfer.transfer!, counterpartyName: `JAN ${written}` } })
        if (written.length <= 16) valid.push({ ...card, transactionId: id('terminal'), card: { ...card.card!, terminalId: written } })
        // Invalid events (a currency that does not exist): Avro records on the DLQ.
        invalid.push({ ...card, transactionId: id('dlq-description'), currency: 'ZZZ', card: { ...card.card!, description: `${written} SHOP` } })
        invalid.push({ ...transfer, transactionId: id('dlq-message'), currency: 'ZZZ', transfer: { ...transfer.transfer!, message: `${written}` } })
        // Text records: no Avro at all.
        text.push({ key: id('text'), value: Buffer.from(`payment ${written} declined\n`) })
        if (w === 0) {
          // Descriptions of 25-28 characters starting with the card number, valid and invalid.
          for (const length of [25, 26, 27, 28]) {
            const description = `${pan} SHOP PRAHA`.padEnd(length, 'X').slice(0, length)
            valid.push({ ...card, transactionId: id(`len${length}`), card: { ...card.card!, description } })
            invalid.push({ ...card, transactionId: id(`dlq-len${length}`), currency: 'ZZZ', card: { ...card.card!, description } })
          }
          // A card number as the merchant id: too long for DE 42 (a DLQ record) from 16 digits.
          const merchant = { ...card, card: { ...card.card!, merchantId: pan } }
          if (pan.length > 15) invalid.push({ ...merchant, transactionId: id('dlq-merchant') })
          else valid.push({ ...merchant, transactionId: id('merchant') })
        }
      }
    }

    const codec = serde.topic(topics.input, 'RawTransaction')
    const producer = kit.producer()
    await producer.connect()
    try {
      const messages = [
        ...(await Promise.all(valid.map(async (e) => ({ key: e.transactionId, value: await codec.encode(e) })))),
        ...(await Promise.all(invalid.map(async (e) => ({ key: e.transactionId, value: await encodeUnchecked(serde, topics.input, e) })))),
        ...text,
      ]
      for (let i = 0; i < messages.length; i += 500) await producer.send({ topic: topics.input, messages: messages.slice(i, i + 500) })
    } finally {
      await producer.disconnect()
    }

    const ingest = await world.startIngest(topics)
    const admin = kit.admin()
    await admin.connect()
    try {
      await waitFor('the ingest to consume every raw record', () => consumedToEnd(admin, topics.groupId, topics.input), {
        timeoutMs: 120_000,
      })
    } finally {
      await admin.disconnect()
    }
    const masked = (await ingest.metricsRegistry.getSingleMetric('tep_pan_masked_total')?.get())?.values ?? []
    await ingest.stop()

    const [enriched, dlq] = await Promise.all([
      readTopic(kit.kafka, topics.enriched, { timeoutMs: 60_000 }),
      readTopic(kit.kafka, topics.dlq, { timeoutMs: 60_000 }),
    ])
    expect(enriched.length).toBe(valid.length)
    expect(dlq.length).toBe(invalid.length + text.length)

    const leaks: string[] = []
    for (const [topic, records] of [['enriched', enriched], ['dlq', dlq]] as const) {
      for (const r of records) {
        const parts = [r.key, r.value, ...headerBytes(r.headers)].filter((b): b is Buffer => b !== null)
        for (const part of parts) {
          const seen = readable(part)
          for (const pan of PANS) if (seen.includes(pan)) leaks.push(`${topic} ${r.key?.toString()}: ${pan}`)
        }
        // The DLQ records carry no digits but the ones produced (headers hold offsets and times).
        if (topic === 'dlq')
          for (const part of [r.key, r.value].filter((b): b is Buffer => b !== null))
            for (const w of luhnWindows(readable(part))) leaks.push(`dlq ${r.key?.toString()}: Luhn-valid ${w}`)
      }
    }
    expect(leaks).toEqual([])
    // The enriched records still decode (a masked raw event is encoded from the object,
    // not spliced from its bytes), with the masked text where the card number was.
    const enrichedCodec = serde.topic(topics.enriched, 'EnrichedTransaction')
    const decoded = await Promise.all(enriched.map((r) => enrichedCodec.decode(r.value)))
    expect(new Set(decoded.map((e) => e.transactionId))).toEqual(new Set(valid.map((e) => e.transactionId)))
    const first = decoded.find((e) => e.transactionId.endsWith('-len27') && e.raw.card?.description?.startsWith('411111'))
    expect(first?.raw.card?.description).toBe('411111******1111 SHOP PRAHA')
    // Counted: the free text before the enrichment call, and the DLQ records.
    const byPath = new Map(masked.map((v) => [v.labels.path, v.value]))
    expect(byPath.get('enrichment-input')).toBeGreaterThanOrEqual(valid.length)
    expect(byPath.get('dlq')).toBeGreaterThanOrEqual(invalid.length + text.length)
  })
})
