import { describe, expect, it } from 'vitest'
import { SILENT_LOGGER } from '../logger.ts'
import { resolveRetryPolicy } from '../retry-policy.ts'
import { ConsumerRecovery, type RecoveredEvent } from './consumer-recovery.ts'

function harness(reopenFailures: number) {
  const calls: string[] = []
  const recovered: RecoveredEvent[] = []
  const failedReasons: string[] = []
  let running = true
  let failuresLeft = reopenFailures
  const stop = new AbortController()
  let whenRecovered!: (e: RecoveredEvent) => void
  const recoveredOnce = new Promise<RecoveredEvent>((r) => (whenRecovered = r))
  const recovery = new ConsumerRecovery({
    logger: SILENT_LOGGER,
    policy: resolveRetryPolicy({ initialDelayMs: 1, maxDelayMs: 2, jitter: 0 }),
    random: () => 0,
    signal: stop.signal,
    isRunning: () => running,
    quiesce: async () => {
      calls.push('quiesce')
    },
    reopen: async () => {
      calls.push('reopen')
      if (failuresLeft-- > 0) throw new Error('cluster not answering')
    },
    onFailed: (reason) => failedReasons.push(reason),
    onRecovered: (e) => {
      recovered.push(e)
      whenRecovered(e)
    },
  })
  return { recovery, calls, recovered, failedReasons, recoveredOnce, stopRunning: () => ((running = false), stop.abort()) }
}

describe('ConsumerRecovery', () => {
  it('lets go of the failed consumer before opening a new one, and retries until the cluster answers', async () => {
    const h = harness(2)
    h.recovery.failed('consumer stream failed', new Error('fetch failed 11 times'))
    const event = await h.recoveredOnce
    expect(h.failedReasons).toEqual(['consumer stream failed'])
    expect(h.calls).toEqual(['quiesce', 'reopen', 'quiesce', 'reopen', 'quiesce', 'reopen'])
    expect(event).toMatchObject({ reason: 'consumer stream failed', attempts: 3 })
    expect(h.recovery.active).toBe(false)
  })

  it('joins a second failure to the recovery already running instead of starting another', async () => {
    const h = harness(1)
    h.recovery.failed('consumer stream failed', new Error('a'))
    h.recovery.failed('consumer group membership failed', new Error('b'))
    await h.recoveredOnce
    await h.recovery.settled()
    expect(h.failedReasons).toEqual(['consumer stream failed'])
    expect(h.recovered).toHaveLength(1)
  })

  it('recovers again after a later failure', async () => {
    const h = harness(0)
    h.recovery.failed('consumer stream failed', new Error('a'))
    await h.recovery.settled()
    h.recovery.failed('consumer heartbeats stalled', new Error('b'))
    await h.recovery.settled()
    expect(h.recovered.map((e) => e.reason)).toEqual(['consumer stream failed', 'consumer heartbeats stalled'])
  })

  it('gives up when its owner stops, without opening a consumer', async () => {
    const h = harness(1_000)
    h.recovery.failed('consumer stream failed', new Error('a'))
    h.stopRunning()
    await h.recovery.settled()
    expect(h.recovered).toEqual([])
    expect(h.calls.filter((c) => c === 'reopen').length).toBeLessThanOrEqual(1)
  })

  it('does nothing when the owner is not running (a failure during stop)', async () => {
    const h = harness(0)
    h.stopRunning()
    h.recovery.failed('consumer stream failed', new Error('a'))
    await h.recovery.settled()
    expect(h.calls).toEqual([])
    expect(h.failedReasons).toEqual([])
  })
})
