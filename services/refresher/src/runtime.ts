/**
 * The environment the refresher is started with (compose, k8s, the image's
 * `podman run` example, npm start, the faults harness): glibc's malloc puts
 * every allocation of 64 KiB or more in its own mapping, returned to the
 * system when freed, instead of its heap.
 *
 * Each automatic re-enrichment run (every REENRICH_INTERVAL) reads the whole
 * REENRICH_WINDOW of `transactions.enriched.v1`: hundreds of MB through
 * sockets whose reads Node allocates as 64 KiB buffers with malloc. Below
 * glibc's (dynamic) mmap threshold those come from the main arena's brk heap;
 * freed between runs, the heap can only shrink from its top, and the small
 * long-lived allocations made meanwhile keep it at its high-water mark. That
 * was the RSS floor rising by 20-25 MB after each run in the 20-minute soak
 * (issue 35). Measured with test/bench/reenrich-rss.ts, 250,000 records,
 * eight runs, floor after a forced GC (docs/DECISIONS.md, 2026-11-29):
 * brk heap 77-105 MB → 11-14 MB, RssAnon 301-329 MB → 229-237 MB. Fetch
 * sizes (1 MiB answers instead of 16) and MALLOC_ARENA_MAX=2 changed nothing.
 *
 * Ignored by other C libraries (musl); the image is Debian (glibc).
 */
export const REFRESHER_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '65536' } as const

/** `REFRESHER_MALLOC_ENV`, each variable already set in `env` (the operator's own choice) kept as it is. */
export function refresherMallocEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(REFRESHER_MALLOC_ENV)) out[name] = env[name] ?? value
  return out
}
