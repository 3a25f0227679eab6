/**
 * Polling with a deadline, for the few things that offer no event to await
 * (a row appearing over HTTP, a process disappearing). Prefer awaiting the event.
 */
export interface WaitForOptions {
  /** Give up after this long. Default 30 s. */
  timeoutMs?: number
  /** Pause between attempts. Default 100 ms. */
  intervalMs?: number
}

/**
 * Calls `probe` until it returns something other than `undefined`/`false`, and
 * returns that. A probe that throws counts as "not yet"; on timeout the error says
 * what was awaited, for how long, and the last value or error seen, which is
 * usually the whole diagnosis.
 *
 *   const row = await waitFor('the enriched transaction for tx-1', () => store.get('tx-1'))
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000
  const intervalMs = options.intervalMs ?? 100
  const deadline = Date.now() + timeoutMs
  let attempts = 0
  let last: { value?: unknown; error?: unknown }
  for (;;) {
    attempts++
    try {
      const value = await probe()
      if (value !== undefined && value !== false) return value
      last = { value }
    } catch (error) {
      last = { error }
    }
    if (Date.now() >= deadline) {
      const seen =
        'error' in last
          ? `last error: ${last.error instanceof Error ? last.error.message : String(last.error)}`
          : `last result: ${JSON.stringify(last.value)}`
      throw new Error(`timed out after ${timeoutMs} ms (${attempts} attempts) waiting for ${what}; ${seen}`, {
        cause: last.error,
      })
    }
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, deadline - Date.now()))))
  }
}
