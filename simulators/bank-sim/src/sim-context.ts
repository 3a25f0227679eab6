import type { SimClock } from './core/sim-clock.ts'
import type { ContractDriftMode } from './drift/contract-drift.ts'
import type { BankState } from './data/bank-state.ts'
import type { FaultInjector } from './http/faults.ts'
import type { Stats } from './http/stats.ts'
import type { UnattendedAccessLimiter } from './http/unattended-access.ts'
import type { AuthorizationRequests } from './oauth/authorization-requests.ts'
import type { HourlyRateLimiter } from './oauth/rate-limiter.ts'
import type { RegisteredClient } from './oauth/registered-client.ts'
import type { TokenService } from './oauth/token-service.ts'
import type { PaymentService } from './payments/payment-service.ts'
import type { SigningSessions } from './payments/signing.ts'
import type { StandingOrderService } from './standing-orders/standing-order-service.ts'

/** Everything the routes share: the bank's state and the simulator's controls. */
export interface SimContext {
  clock: SimClock
  bank: BankState
  tokens: TokenService
  payments: PaymentService
  standingOrders: StandingOrderService
  signing: SigningSessions
  authRequests: AuthorizationRequests
  rateLimiter: HourlyRateLimiter
  unattended: UnattendedAccessLimiter
  faults: FaultInjector
  stats: Stats
  clients: Map<string, RegisteredClient>
  /** The contract-drift mode, when switched on (`--contract-drift`). */
  drift?: ContractDriftMode | undefined
}
