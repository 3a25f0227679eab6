import type { CredentialStore } from '../core/credentials.ts'
import type { FaultInjector } from '../core/faults.ts'
import type { Mutator } from '../core/mutations.ts'
import type { RateLimiter } from '../core/rate-limiter.ts'
import type { SimClock } from '../core/sim-clock.ts'
import type { Stats } from '../core/stats.ts'
import type { TokenService } from '../core/token-service.ts'
import type { World } from '../core/world.ts'

export interface StoredSuggestion {
  id: string
  receivedAt: string
  principal: string
  body: unknown
}

/**
 * What each element of `data.batches` holds. `full`: `level`, `type`, `ids`
 * and `keys` (the shape this project models). `ids-only`: just `ids`, the one
 * field the interface description names, to test clients against the letter.
 */
export type InvalidationShape = 'full' | 'ids-only'

export const INVALIDATION_SHAPES: readonly InvalidationShape[] = ['full', 'ids-only']

/** Everything the routes share: one per simulator instance. */
export interface SimContext {
  world: World
  mutator: Mutator
  tokens: TokenService
  credentials: CredentialStore
  faults: FaultInjector
  stats: Stats
  clock: SimClock
  limiter: RateLimiter | undefined
  suggestions: StoredSuggestion[]
  invalidationShape: InvalidationShape
}
