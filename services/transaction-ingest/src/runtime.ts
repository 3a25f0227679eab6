/**
 * Node options the ingest is started with (compose, k8s, npm start, the bench):
 * a 64 MB young-generation semi-space instead of V8's default.
 *
 * Records live for tens of milliseconds: they are fetched, wait for a batch
 * lookup, then wait for their transaction. With the default young generation
 * many of them outlive two scavenges and are promoted. The old space then
 * fills and is marked every ~2.5 s, and the main-thread marking steps held
 * the event loop for 40-110 ms at a time. That was the once-a-second slow
 * transaction behind the latency p99.
 *
 * Measured 2026-11-25 at 1,000 ev/s after the warm-up:
 * - p99 134-216 ms → 99-106 ms;
 * - p50 47-51 ms → 39-40 ms.
 * The young generation grows to this size only under allocation pressure.
 */
export const INGEST_NODE_OPTIONS = '--max-semi-space-size=64'
