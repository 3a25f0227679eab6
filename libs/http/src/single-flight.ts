/**
 * One in-flight promise per key: callers asking for a key that is already being
 * computed share that computation instead of starting another. Typical use is a
 * token cache, where N concurrent requests at expiry must cause one token request.
 * The entry is dropped as soon as the promise settles (success or failure), so a
 * failure is not cached and the next caller tries again.
 */
export class SingleFlight<K, V> {
  readonly #inFlight = new Map<K, Promise<V>>()

  run(key: K, task: () => Promise<V>): Promise<V> {
    const existing = this.#inFlight.get(key)
    if (existing !== undefined) return existing
    const promise = (async () => {
      try {
        return await task()
      } finally {
        this.#inFlight.delete(key)
      }
    })()
    this.#inFlight.set(key, promise)
    return promise
  }

  /** True while a computation for `key` is running. */
  has(key: K): boolean {
    return this.#inFlight.has(key)
  }
}
