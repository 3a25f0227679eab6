import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bankToday } from '@tep/bank-client'
import { startHarness, type Harness } from './support/bank-sync-harness.ts'

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

describe('an instance that dies between fetching the pages and committing', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startHarness()
  })
  afterAll(async () => {
    await h?.close()
  })

  it('leaves nothing committed; the next owner redoes the sync: nothing lost, nothing duplicated, the zombie is fenced', async () => {
    // Instance A fetches everything and sends it inside its transaction, then freezes before the commit.
    let frozen!: () => void
    const reachedCommit = new Promise<void>((resolve) => {
      frozen = resolve
    })
    let release!: () => void
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    const a = await h.startInstance({
      hooks: {
        beforeCommit: async (write) => {
          if (write.reason !== 'SYNC' || write.rawTransactions.length === 0) return
          frozen()
          await released
        },
      },
    })
    const account = (await h.accountsOf('user1')).find(
      (x) => x.currency === 'CZK' && x.kind !== 'CREDIT_CARD',
    )
    if (!account) throw new Error('user1 has no CZK current account in the simulator')
    const { consentId } = await h.grantThroughGateway(a.sync.gatewayUrl as string, 'customer-c', 'user1', [
      account.id,
    ])
    await reachedCommit

    // A leaves (as a crashed process would, its transaction still open); B takes the partitions over.
    const stoppingA = a.sync.stop()
    const b = await h.startInstance({ gateway: false })
    await h.waitForSync(b, consentId, 0, 'synced')

    // The zombie wakes up and tries to commit: fenced, nothing of it becomes visible.
    release()
    await stoppingA
    expect(a.syncs.filter((s) => s.consentId === consentId && s.outcome.kind === 'synced')).toEqual([])

    const history = await h.bankHistory(
      'user1',
      account.id,
      addDays(bankToday(new Date(h.sim.clock.now())), -30),
    )
    const raw = await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'the raw events of B',
      (r) => r.length >= history.length,
    )
    const refs = raw.map((r) => r.value.sourceReference)
    expect(refs).toHaveLength(history.length)
    expect(new Set(refs)).toEqual(
      new Set(history.map((t) => `${consentId}/${account.id}/${t.entryReference}`)),
    )
    const bankTx = await h.readUntil(
      h.topics.bankTransactions,
      h.codecs.bankTransaction,
      'the bank transactions of B',
      (r) => r.length >= history.length,
    )
    expect(bankTx).toHaveLength(history.length)

    // B's state is what it committed; a further sync of B adds nothing.
    const mark = b.syncs.length
    await h.waitForSync(b, consentId, mark, 'synced')
    expect(b.syncs.slice(mark).find((s) => s.consentId === consentId)?.outcome).toMatchObject({
      added: 0,
      modified: 0,
      raw: 0,
    })
    expect(await h.readAll(h.topics.raw, h.codecs.raw)).toHaveLength(history.length)
  })
})
