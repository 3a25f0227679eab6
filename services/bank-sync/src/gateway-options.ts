import type { BankClient } from '@tep/bank-client'
import type { RecordProducer, TopicCodec } from '@tep/kafka'
import type { Consent } from '@tep/schemas'
import type { TokenCipher } from '@tep/token-cipher'
import type { AuthorizationStateSigner } from './authorization-state.ts'
import type { CallbackBudget } from './callback-budget.ts'
import type { SyncLogger } from './sync-deps.ts'
import type { ConsentView } from './consent-view.ts'
import type { CustomerTokenVerifier } from './customer-token.ts'
import type { GatewayLimits } from './gateway-limits.ts'
import type { BankSyncMetrics } from './metrics.ts'

/** What the consent gateway is built from (buildConsentGateway). */
export interface ConsentGatewayOptions {
  bank: BankClient
  cipher: TokenCipher
  signer: AuthorizationStateSigner
  view: ConsentView
  /** An idempotent (non-transactional, acks all) producer for the consents topic. */
  producer: RecordProducer
  consentsTopic: string
  consentCodec: TopicCodec<Consent>
  metrics: BankSyncMetrics
  logger: SyncLogger
  now: () => number
  /** Verifies the bank application's customer token (the only source of a customer id). */
  customers: CustomerTokenVerifier
  /** The callbacks' bounded share of the bank's token endpoint. */
  callbackBudget: CallbackBudget
  /** Secure cookies and HSTS: true unless the gateway is plain HTTP on loopback. */
  secure: boolean
  /** PKCE S256 with the bank (default true; turn off only for a bank that refuses it). */
  pkce?: boolean
  /** Abuse limits of the HTTP server and per customer; DEFAULT_GATEWAY_LIMITS for what is not given. */
  limits?: Partial<GatewayLimits>
}
