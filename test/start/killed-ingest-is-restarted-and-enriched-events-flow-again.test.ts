import { afterAll, describe, expect, it } from 'vitest'
import { StartProcess, type StatusLine } from './start-process.ts'

const ENRICHED = 'transactions.enriched.v1'
const ingest = (s: StatusLine) => s.services['transaction-ingest']!
const enriched = (s: StatusLine) => s.counts[ENRICHED] ?? 0

// The "Done when": with the ingest killed twice by hand (kill -9), npm
// start brings it back by itself and the view shows it. Each step waits for the
// JSON line that proves it, so the test has no sleeps.
describe('npm start supervision', () => {
  const start = new StartProcess(['--rate', '20', '--interval', '1', '--duration', '600'])
  afterAll(() => start.stop())

  it('restarts a transaction-ingest killed twice with SIGKILL, counts the restarts, and enriched events flow again', async () => {
    let seen = await start.next((s) => ingest(s).ready === true && enriched(s) > 0, 'the ingest ready and enriched events flowing')

    for (const round of [1, 2]) {
      const pid = ingest(seen).pid!
      expect(pid).toBeGreaterThan(0)
      process.kill(pid, 'SIGKILL')
      const restarted = await start.next((s) => ingest(s).restarts === round && ingest(s).pid !== pid, `restart #${round}`)
      expect(ingest(restarted).lastExit).toBe('signal SIGKILL')
      const ready = await start.next((s) => ingest(s).restarts === round && ingest(s).ready === true, `the restarted ingest (#${round}) ready`)
      // Counted after the new process is ready: only it can have produced these.
      seen = await start.next((s) => enriched(s) > enriched(ready) && ingest(s).restarts === round, `enriched events after restart #${round}`)
    }

    expect(ingest(seen)).toMatchObject({ state: 'running', restarts: 2, ready: true })
    // No other service was restarted along the way.
    for (const [name, s] of Object.entries(seen.services)) if (name !== 'transaction-ingest') expect(s.restarts, name).toBe(0)
    expect(seen.consumerLag).toHaveProperty('transaction-ingest')
    expect(seen.endToEndLatencySeconds).not.toBeNull()
    expect(await start.stop()).toBe(0)
  }, 300_000)
})
