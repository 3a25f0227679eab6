import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bankToday } from '@tep/bank-client'
import { uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import { bankSyncProcessEnv, startHarness, type Harness } from './support/bank-sync-harness.ts'

const MAIN = fileURLToPath(new URL('../../services/bank-sync/src/main.ts', import.meta.url))
/** The consents group's session timeout of main.ts (start-bank-sync.ts default). */
const SESSION_TIMEOUT_MS = 30_000
/** Heartbeat of main.ts: the killed member's session was last renewed at most this long before the kill. */
const HEARTBEAT_MS = 3_000
const PARTITIONS = 6

interface LogLine {
  msg: string
  at: number
  [field: string]: unknown
}

/** The JSON log lines of one bank-sync process, as they arrive, with the test's arrival time. */
class ProcessLog {
  readonly lines: LogLine[] = []
  text = ''
  #partial = ''
  #waiters: Array<() => void> = []

  feed(chunk: Buffer): void {
    const at = Date.now()
    this.text += chunk.toString()
    const parts = (this.#partial + chunk.toString()).split('\n')
    this.#partial = parts.pop() ?? ''
    for (const part of parts) {
      try {
        this.lines.push({ ...(JSON.parse(part) as { msg: string }), at })
      } catch {
        // not a log line (e.g. a Node warning)
      }
    }
    for (const w of this.#waiters.splice(0)) w()
  }

  /** Resolves with the first line matching, now or when it arrives. */
  async line(what: string, match: (l: LogLine) => boolean, timeoutMs = 90_000): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.lines.find(match)
      if (found) return found
      if (Date.now() >= deadline)
        throw new Error(`no log line "${what}" within ${timeoutMs} ms; output:\n${this.text.slice(-3000)}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now())
        this.#waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

describe('a bank-sync process with BANK_SYNC_INSTANCE_ID killed (SIGKILL) and restarted with the same id', () => {
  let h: Harness
  const children: ChildProcess[] = []
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    // Real time on both sides: the process runs on the system clock; six partitions as in the catalog.
    h = await startHarness({ realClock: true, partitions: PARTITIONS })
    // info: the test reads the process's "joined the group" and "partition rebuilt" lines.
    env = bankSyncProcessEnv(h, 'bank-sync-static', { LOG_LEVEL: 'info', BANK_SYNC_INSTANCE_ID: uniqueName('bank-sync-pod') })
  })
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    await h?.close()
  })

  function startProcess(): { child: ChildProcess; log: ProcessLog } {
    const log = new ProcessLog()
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout?.on('data', (d: Buffer) => log.feed(d))
    child.stderr?.on('data', (d: Buffer) => log.feed(d))
    children.push(child)
    return { child, log }
  }

  const joined = (l: LogLine) => l.msg === 'joined the group' && Array.isArray(l.partitions) && l.partitions.length > 0
  const rebuilt = (l: LogLine) => l.msg === 'consents partition rebuilt; syncing'

  it('gets its partitions back within one start-up, without a rebalance, and syncs again', async () => {
    const first = startProcess()
    const firstJoin = await first.log.line('first process joined the consents group', joined)
    expect(firstJoin.partitions).toHaveLength(PARTITIONS)
    const gatewayUrl = `http://127.0.0.1:${h.gatewayPort}`
    await waitFor('the consent gateway of the first process', async () => (await fetch(`${gatewayUrl}/healthz`)).ok, {
      timeoutMs: 60_000,
      intervalMs: 200,
    })
    const account = (await h.accountsOf('user2')).find((a) => a.currency === 'CZK' && a.kind !== 'CREDIT_CARD')
    if (!account) throw new Error('user2 has no CZK current account in the simulator')
    const { consentId, callback } = await h.grantThroughGateway(gatewayUrl, 'customer-static', 'user2', [account.id])
    expect(callback.status).toBe(201)
    const dateFrom = addDays(bankToday(new Date()), -30)
    const before = await h.bankHistory('user2', account.id, dateFrom)
    await h.readUntil(h.topics.raw, h.codecs.raw, 'the first sync of the first process', (r) => r.length >= before.length)

    first.child.kill('SIGKILL')
    await new Promise((resolve) => first.child.once('exit', resolve))
    const killedAt = Date.now()

    const second = startProcess()
    const secondJoin = await second.log.line('restarted process joined the consents group', joined)
    const lastRebuilt = await second.log.line(
      `restarted process rebuilt all ${PARTITIONS} partitions`,
      (l) => rebuilt(l) && second.log.lines.filter(rebuilt).length >= PARTITIONS,
    )
    const ownedAfterMs = secondJoin.at - killedAt
    const syncingAfterMs = lastRebuilt.at - killedAt
    console.info(`restart with the same instance id: partitions owned ${ownedAfterMs} ms, syncing ${syncingAfterMs} ms after the kill`)

    // The proof without a clock: the static member took its place back in the same
    // generation. Had the group waited for the killed member's session to expire, the
    // coordinator would have removed it and rebalanced (a new generation).
    expect(secondJoin.generationId).toBe(firstJoin.generationId)
    expect(secondJoin.partitions).toEqual(firstJoin.partitions)
    // And against the clock, with a wide margin: the killed member's session, last renewed
    // at most one heartbeat before the kill, cannot expire before SESSION_TIMEOUT - HEARTBEAT
    // (27 s) after it. The restarted process needs one start-up (a few seconds, more on a
    // loaded machine); the bound leaves it 15 s of slack and stays 7 s below the earliest
    // possible expiry, so neither a slow machine nor the dynamic-membership wait can be
    // mistaken for the other.
    expect(ownedAfterMs).toBeLessThan(SESSION_TIMEOUT_MS - HEARTBEAT_MS - 7_000)
    expect(syncingAfterMs).toBeLessThan(SESSION_TIMEOUT_MS - HEARTBEAT_MS - 7_000)

    // Syncing again: a new entry at the bank arrives once, from the restarted process.
    await h.admin('POST', '/__admin/transactions', {
      accountId: account.id,
      transactions: [{ type: 'CARD', amount: 33.3, shopIndex: 7, entryReference: 'STATIC-1' }],
    })
    const after = await h.bankHistory('user2', account.id, dateFrom)
    expect(after.length).toBe(before.length + 1)
    const raw = await h.readUntil(h.topics.raw, h.codecs.raw, 'the sync of the restarted process', (r) => r.length >= after.length)
    const refs = raw.map((r) => r.value.sourceReference)
    expect(refs).toHaveLength(after.length)
    expect(new Set(refs)).toEqual(new Set(after.map((t) => `${consentId}/${account.id}/${t.entryReference}`)))
  })
})
