/**
 * patches/@platformatic+kafka+2.12.1.patch makes @platformatic/kafka's
 * Transaction#addPartitions look at each topic and partition of a send once
 * instead of once per message. These tests prove that what it asks the broker to
 * add (AddPartitionsToTxn) and what it remembers as added are what the original
 * loop gave, for any messages, and that partitions are normalised as before.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

const kafkaEntry = createRequire(import.meta.url).resolve('@platformatic/kafka')
let dist = path.dirname(kafkaEntry)
while (path.basename(dist) !== 'dist') dist = path.dirname(dist)
const transactionFile = path.join(dist, 'clients', 'producer', 'transaction.js')
const { Transaction } = (await import(pathToFileURL(transactionFile).href)) as {
  Transaction: new (producer: unknown) => { addPartitions(metadata: unknown, messages: unknown[], callback: (error: unknown) => void): void }
}
const symbols = (await import(pathToFileURL(path.join(dist, 'symbols.js')).href)) as Record<string, symbol>
const { kOptions } = (await import(pathToFileURL(path.join(dist, 'clients', 'base', 'base.js')).href)) as { kOptions: symbol }

const COUNTS = new Map([
  ['a', 3],
  ['b', 6],
  ['c', 1],
])

/** A producer that records the AddPartitionsToTxn requests and answers them at once. */
function fakeProducer(asked: Map<string, number[]>[]) {
  return {
    [kOptions]: { transactionalId: 't-1' },
    [symbols.kTransactionAddPartitions!](_id: unknown, topicPartitions: Map<string, Set<number>>, callback: (error: null) => void) {
      asked.push(new Map([...topicPartitions].map(([t, ps]) => [t, [...ps]])))
      callback(null)
    },
  }
}

/** What the original loop asked for: every topic:partition of the send not added before, in first-seen order. */
function expected(sends: { topic: string; partition: number }[][]): Map<string, number[]>[] {
  const added = new Set<string>()
  const out: Map<string, number[]>[] = []
  for (const send of sends) {
    const ask = new Map<string, number[]>()
    for (const m of send) {
      const p = m.partition % COUNTS.get(m.topic)!
      const key = `${m.topic}:${p}`
      if (added.has(key)) continue
      added.add(key)
      ask.set(m.topic, [...(ask.get(m.topic) ?? []), p])
    }
    if (ask.size > 0) out.push(ask)
  }
  return out
}

const message = fc.record({ topic: fc.constantFrom('a', 'b', 'c'), partition: fc.nat({ max: 20 }) })

describe('the patched Transaction#addPartitions of @platformatic/kafka', () => {
  it('is patched (the postinstall step took)', () => {
    expect(readFileSync(transactionFile, 'utf8')).toContain('tep-patch: addPartitions asks once per partition of a send')
  })

  it('asks for the partitions the original asked for, once each over the sends of a transaction, and normalises every message', () => {
    fc.assert(
      fc.property(fc.array(fc.array(message, { maxLength: 40 }), { maxLength: 5 }), (sends) => {
        const asked: Map<string, number[]>[] = []
        const tx = new Transaction(fakeProducer(asked))
        const metadata = { topics: new Map([...COUNTS].map(([t, n]) => [t, { partitionsCount: n }])) }
        const copies = sends.map((s) => s.map((m) => ({ ...m })))
        for (const send of copies) tx.addPartitions(metadata, send, (error) => expect(error).toBeNull())
        expect(asked).toEqual(expected(sends))
        for (const m of copies.flat()) expect(m.partition).toBeLessThan(COUNTS.get(m.topic)!)
      }),
    )
  })
})
