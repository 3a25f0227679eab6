/**
 * KafkaJS 2.2.4 on Node 24 emits `TimeoutNegativeWarning` whenever a client
 * connects (tulios/kafkajs#1751: `setTimeout(throttledUntil - Date.now())` with
 * the default throttledUntil of -1). Node clamps the delay to 1 ms, so it is
 * harmless, but it buries real output. This drops exactly that warning and hands
 * every other one to the listeners that were installed before.
 */
export function silenceKnownWarnings(): void {
  const marker = Symbol.for('tep.local-stack.silenceKnownWarnings')
  const g = globalThis as Record<symbol, unknown>
  if (g[marker]) return
  g[marker] = true
  const previous = process.listeners('warning')
  process.removeAllListeners('warning')
  process.on('warning', (warning) => {
    if (warning.name === 'TimeoutNegativeWarning') return
    for (const listener of previous) listener(warning)
  })
}
