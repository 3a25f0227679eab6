import type { OutgoingMessage, TransactionalWriter } from '@tep/kafka'
import type { OwnerOptions } from './owner-options.ts'
import type { SyncWrite } from './sync-deps.ts'

/**
 * Publishes one sync's outputs and the consent's next state in ONE Kafka
 * transaction: the bank transactions, the raw events derived from them, and the
 * consent record whose cursors and tokens say they were read. A reader therefore
 * never sees the cursor move without the records, nor the records twice after a
 * crash (the next owner resumes from the cursor the same transaction wrote).
 *
 * `write.consent` is the state to store (its version already set by the owner).
 */
export async function publishConsentWrite(
  writer: TransactionalWriter,
  owner: Pick<OwnerOptions, 'codecs' | 'topics' | 'hooks' | 'partition'>,
  write: SyncWrite,
): Promise<void> {
  const { codecs, topics } = owner
  const bankMessages: OutgoingMessage[] = await Promise.all(
    write.bankTransactions.map(async (t) => ({
      key: `${t.consentId}/${t.accountId}/${t.entryReference}`,
      value: await codecs.bankTransaction.encode(t),
    })),
  )
  const rawMessages: OutgoingMessage[] = await Promise.all(
    write.rawTransactions.map(async (r) => ({ key: r.transactionId, value: await codecs.raw.encode(r) })),
  )
  const consentMessage: OutgoingMessage = { key: write.consent.consentId, value: await codecs.consent.encode(write.consent) }
  await writer.run(async (tx) => {
    // A first sync with a long backfill can hold thousands of records: the writer splits
    // them so no partition's batch grows past the broker's message.max.bytes.
    if (bankMessages.length > 0) await tx.send(topics.bankTransactions, bankMessages)
    if (rawMessages.length > 0) await tx.send(topics.raw, rawMessages)
    await tx.send(topics.consents, [consentMessage])
    await owner.hooks.beforeCommit?.({ ...write, partition: owner.partition })
  })
}
