// Regression test for tulios/kafkajs#1704 / #1751: an idle KafkaJS connection
// re-armed a 1 ms timer forever (CPU burnt, TimeoutNegativeWarning on Node 24).
// scripts/patch-kafkajs.mjs (postinstall) fixes it; this proves the installed
// KafkaJS carries the fix and that a queued request still gets a check scheduled.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: Record<string, unknown>) => {
  pending: unknown[]
  throttledUntil: number
  throttleCheckTimeoutId: NodeJS.Timeout | null
  scheduleCheckPendingRequests(): void
  destroy(): void
}
const silentLogger = { debug() {}, info() {}, warn() {}, error() {}, namespace: () => silentLogger }

function queue() {
  return new RequestQueue({ instrumentationEmitter: { emit() {} }, maxInFlightRequests: 1, requestTimeout: 1000, enforceRequestTimeout: false, clientId: 't', broker: 'b', logger: silentLogger })
}

describe('KafkaJS RequestQueue (patched)', () => {
  it('schedules no timer when nothing is pending and there is no throttle', () => {
    const q = queue()
    q.scheduleCheckPendingRequests()
    expect(q.throttleCheckTimeoutId).toBeNull()
    q.destroy()
  })

  it('still schedules a check when requests are pending', () => {
    const q = queue()
    q.pending.push({})
    q.scheduleCheckPendingRequests()
    expect(q.throttleCheckTimeoutId).not.toBeNull()
    q.pending.length = 0
    q.destroy()
  })
})
