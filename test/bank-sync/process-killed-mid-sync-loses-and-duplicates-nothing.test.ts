import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bankToday } from '@tep/bank-client'
import { waitFor } from '../support/wait-for.ts'
import { bankSyncProcessEnv, startHarness, type Harness } from './support/bank-sync-harness.ts'

const MAIN = fileURLToPath(new URL('../../services/bank-sync/src/main.ts', import.meta.url))

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

describe('the bank-sync process killed (SIGKILL) in the middle of a sync', () => {
  let h: Harness
  const children: ChildProcess[] = []
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    // Real time on both sides: the process runs on the system clock.
    // Six partitions: the process checks the topics against the catalog.
    h = await startHarness({ realClock: true, partitions: 6 })
    env = bankSyncProcessEnv(h, 'bank-sync-proc')
  })
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    await h?.admin('DELETE', '/__admin/faults').catch(() => undefined)
    await h?.close()
  })

  let output = ''
  function startProcess(): ChildProcess {
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()))
    children.push(child)
    return child
  }

  async function gatewayUp(): Promise<string> {
    const url = `http://127.0.0.1:${h.gatewayPort}`
    try {
      await waitFor(
        'the consent gateway of the bank-sync process',
        async () => (await fetch(`${url}/healthz`)).ok,
        {
          timeoutMs: 60_000,
          intervalMs: 200,
        },
      )
    } catch (err) {
      throw new Error(`${(err as Error).message}\nprocess output:\n${output.slice(-3000)}`, { cause: err })
    }
    return url
  }

  it('the next process redoes the interrupted sync: every entry exactly once', async () => {
    const first = startProcess()
    const gatewayUrl = await gatewayUp()
    const account = (await h.accountsOf('user1')).find(
      (a) => a.currency === 'CZK' && a.kind !== 'CREDIT_CARD',
    )
    if (!account) throw new Error('user1 has no CZK current account in the simulator')
    const { consentId, callback } = await h.grantThroughGateway(gatewayUrl, 'customer-k', 'user1', [
      account.id,
    ])
    expect(callback.status).toBe(201)
    const dateFrom = addDays(bankToday(new Date()), -30)
    const before = await h.bankHistory('user1', account.id, dateFrom)
    await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'the first sync of the process',
      (r) => r.length >= before.length,
    )

    // New entries, then hold the next transactions read at the bank and kill the process while it waits.
    await h.admin('POST', '/__admin/transactions', {
      accountId: account.id,
      transactions: [
        { type: 'CARD', amount: 12.5, shopIndex: 5, entryReference: 'KILL-1' },
        {
          type: 'TRANSFER',
          amount: 700,
          counterparty: { name: 'Twin', number: '2000145399', bankCode: '0800' },
          copies: 2,
        },
      ],
    })
    const delayed = async () =>
      (await h.admin<{ faultsInjected: { delayed: number } }>('GET', '/__admin/stats')).faultsInjected.delayed
    const delayedBefore = await delayed()
    await h.admin('PUT', '/__admin/faults', {
      latencyMs: 5_000,
      pathPrefix: `/accounts/${account.id}/transactions`,
    })
    await waitFor(
      'a transactions read of the process to be held by the bank',
      async () => (await delayed()) > delayedBefore,
      {
        timeoutMs: 30_000,
        intervalMs: 50,
      },
    )
    first.kill('SIGKILL')
    await new Promise((resolve) => first.once('exit', resolve))
    await h.admin('DELETE', '/__admin/faults')

    // The second process (no BANK_SYNC_INSTANCE_ID: a dynamic member) gets the partitions once
    // the killed member's session times out, 27-30 s after the kill (30 s session, 3 s
    // heartbeat), then rebuilds and syncs: the redone sync gets twice that.
    startProcess()
    const after = await h.bankHistory('user1', account.id, dateFrom)
    expect(after.length).toBe(before.length + 3)
    const raw = await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'the redone sync of the second process',
      (r) => r.length >= after.length,
      60_000,
    )
    const refs = raw.map((r) => r.value.sourceReference)
    expect(refs).toHaveLength(after.length)
    expect(new Set(refs)).toEqual(new Set(after.map((t) => `${consentId}/${account.id}/${t.entryReference}`)))
    const bankTx = await h.readUntil(
      h.topics.bankTransactions,
      h.codecs.bankTransaction,
      'the bank records',
      (r) => r.filter((b) => b.value.changeType === 'ADDED').length >= after.length,
    )
    expect(bankTx.filter((b) => b.value.changeType === 'ADDED')).toHaveLength(after.length)
  })
})
