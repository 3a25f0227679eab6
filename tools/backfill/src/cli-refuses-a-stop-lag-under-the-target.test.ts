import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const main = fileURLToPath(new URL('./main.ts', import.meta.url))

describe('npm run backfill with a live stop lag not above its target lag', () => {
  it('is refused as usage (exit 2) before it connects to anything', async () => {
    // Unreachable broker: reaching for it would fail otherwise and later (exit 1).
    const env = { ...process.env, ENRICHMENT_CLIENT_ID: 'id', ENRICHMENT_CLIENT_SECRET: 'secret', KAFKA_BROKERS: '127.0.0.1:1' }
    const failed = await promisify(execFile)(process.execPath, [main, '--live-target-lag', '2000', '/dev/null'], { env }).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    )
    expect(failed?.code).toBe(2)
    expect(failed?.stderr).toContain('--live-stop-lag (1000) must be greater than --live-target-lag (2000)')
  })
})
