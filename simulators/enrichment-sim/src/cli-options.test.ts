import { describe, expect, it } from 'vitest'
import { parseCliOptions } from './cli-options.ts'

describe('parseCliOptions', () => {
  it('has the documented defaults', () => {
    expect(parseCliOptions([])).toEqual({ help: false, port: 8181, host: '127.0.0.1', seed: '1', shops: 50_000, merchants: undefined, https: false, mutationsPerMinute: 6, rateLimitPerSecond: undefined, latencyMs: 0, invalidationShape: 'full', withoutBatchAndComplete: false })
  })

  it('reads every option', () => {
    expect(parseCliOptions(['--port', '0', '--host', '::1', '--seed', 'demo', '--shops', '1000', '--merchants', '10', '--https', '--mutations', '0', '--rate-limit', '50/s', '--latency-ms', '3', '--invalidation-shape', 'ids-only', '--without-batch-and-complete'])).toEqual({
      help: false,
      port: 0,
      host: '::1',
      seed: 'demo',
      shops: 1_000,
      merchants: 10,
      https: true,
      mutationsPerMinute: 0,
      rateLimitPerSecond: 50,
      latencyMs: 3,
      invalidationShape: 'ids-only',
      withoutBatchAndComplete: true,
    })
    expect(parseCliOptions(['-h']).help).toBe(true)
  })

  it('reads --contract-drift alone (seeded by --seed) or with its own seed, off when absent', () => {
    expect(parseCliOptions([]).contractDrift).toBeUndefined()
    expect(parseCliOptions(['--contract-drift']).contractDrift).toBe('')
    expect(parseCliOptions(['--contract-drift=42', '--seed', '7'])).toMatchObject({ contractDrift: '42', seed: '7' })
  })

  it('names the bad option and what it expects', () => {
    expect(() => parseCliOptions(['--port', '70000'])).toThrow(/--port must be an integer from 0 to 65535, got "70000"/)
    expect(() => parseCliOptions(['--rate-limit', 'fast'])).toThrow(/--rate-limit must be a positive number of requests per second/)
    expect(() => parseCliOptions(['--latency-ms=-1'])).toThrow(/--latency-ms must be a non-negative number/)
    expect(() => parseCliOptions(['--invalidation-shape', 'keys-only'])).toThrow(/--invalidation-shape must be one of full, ids-only, got "keys-only"/)
    expect(() => parseCliOptions(['--frobnicate'])).toThrow(/Unknown option '--frobnicate'/)
  })
})
