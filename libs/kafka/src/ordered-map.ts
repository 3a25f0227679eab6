import { KafkaConfigError } from './errors.ts'

/**
 * Outcome of one item of `mapInOrder`: its value, or the error it threw.
 */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown }

/**
 * Runs `fn` over `items` with at most `concurrency` calls in flight and returns
 * the outcomes in INPUT order, whatever order they finish in. That is what lets a
 * partition's records be processed concurrently while its outputs keep the input
 * order. `shouldContinue` is checked before each start; once it says false, no new
 * call starts and the remaining items are reported as skipped (error `skipped`).
 */
export async function mapInOrder<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
  shouldContinue: () => boolean = () => true,
): Promise<Settled<R>[]> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new KafkaConfigError(`concurrency must be a positive integer, got ${concurrency}`, { concurrency })
  }
  const results: Settled<R>[] = new Array(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      if (!shouldContinue()) {
        results[index] = { ok: false, error: SKIPPED }
        continue
      }
      try {
        results[index] = { ok: true, value: await fn(items[index] as T, index) }
      } catch (error) {
        results[index] = { ok: false, error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  return results
}

/** Error value of items `mapInOrder` did not start because `shouldContinue` said stop. */
export const SKIPPED: unique symbol = Symbol('skipped')
