import { Rng } from '../core/random.ts'

/** The two spellings of payment creation: the description's endpoint table and its versioning table. */
export type PaymentsPath = '/payments/' | '/payments'

export interface DriftLogger {
  info(obj: object, msg: string): void
}

/**
 * The contract-drift mode (`--contract-drift[=<seed>]`, `SIM_BANK_CONTRACT_DRIFT`): answers
 * that the bank description allows but the modelled bank never gives, drawn from a seeded
 * generator, so that a client written from the same model as this simulator meets them
 * before the real bank does. Only what the description leaves open varies:
 *
 * - "the shape of the token response: not shown": `expires_in` absent or a string,
 *   `refresh_token_expires_in` a string, a `scope` that is a superset (in either order),
 *   `token_type` in lower case, unknown fields;
 * - "The error body shape ... not shown": an expired access token answered with a bare 401
 *   (no `parameters.REASON`, or no body at all);
 * - `POST /payments/` (endpoint table) or `POST /payments` (versioning table): one of the two
 *   is served, drawn once per run, the other is 404 `no operation`;
 * - "Fields of account, balance, transaction, ... beyond those named above: not shown":
 *   unknown top-level fields, and the paging numbers as strings.
 *
 * Every draw is counted (`drawn()`, also in `GET /__admin/stats`) and each distinct one
 * logged once. Revocation and the 90 days keep their modelled 401 reasons: the mode varies
 * shapes, never what a consent's end means.
 */
export class ContractDriftMode {
  readonly seed: string
  readonly paymentsPath: PaymentsPath
  readonly #rng: Rng
  readonly #logger: DriftLogger | undefined
  readonly #drawn = new Map<string, number>()

  constructor(seed: string, logger?: DriftLogger) {
    this.seed = seed
    this.#logger = logger
    this.#rng = Rng.of(seed, 'contract-drift')
    this.paymentsPath = this.#draw('payments-path', ['/payments/', '/payments'] as const)
  }

  /** How often each `aspect=variant` was drawn so far. */
  drawn(): Record<string, number> {
    return Object.fromEntries(this.#drawn)
  }

  /** A token endpoint answer (a JSON object) as the drifting bank gives it. */
  tokenAnswer(answer: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = { ...answer }
    const expiresIn = this.#draw('token.expires_in', ['number', 'absent', 'string'] as const)
    if (expiresIn === 'absent') delete out.expires_in
    else if (expiresIn === 'string') out.expires_in = String(out.expires_in)
    if (out.refresh_token_expires_in !== undefined && this.#draw('token.refresh_token_expires_in', ['number', 'string'] as const) === 'string') {
      out.refresh_token_expires_in = String(out.refresh_token_expires_in)
    }
    if (typeof out.scope === 'string') {
      const scope = this.#draw('token.scope', ['exact', 'superset', 'superset-reordered'] as const)
      if (scope === 'superset') out.scope = `${out.scope} offline_access`
      else if (scope === 'superset-reordered') out.scope = `openid ${out.scope}`
    }
    if (this.#draw('token.token_type', ['Bearer', 'bearer'] as const) === 'bearer') out.token_type = 'bearer'
    if (this.#draw('token.unknown-fields', ['none', 'added'] as const) === 'added') {
      out['not-before-policy'] = 0
      out.session_state = this.#rng.digits(16)
      out.x_bank_trace = { node: this.#rng.int(1, 9) }
    }
    return out
  }

  /**
   * A 401 of the API: an expired access token loses its reason (a bare 401, with or without a
   * COBS body); every other 401 is answered as modelled. Undefined = leave the answer alone.
   */
  unauthorized(body: unknown): { body: string } | undefined {
    if (reasonOf(body) !== 'TOKEN_EXPIRED') return undefined
    const bare = this.#draw('401.token-expired', ['empty-body', 'no-reason'] as const)
    return { body: bare === 'empty-body' ? '' : JSON.stringify({ errors: [{ error: 'UNAUTHORISED', scope: null, parameters: null, message: 'Unauthorized' }] }) }
  }

  /** A 2xx JSON object of the accounts, payments or cards interfaces. */
  apiAnswer(body: Record<string, unknown>): Record<string, unknown> {
    let out = body
    if (this.#draw('api.unknown-fields', ['none', 'added'] as const) === 'added') {
      out = { ...out, x_bank_trace: { node: this.#rng.int(1, 9) }, _links: { self: { href: 'about:blank' } } }
    }
    const paging = ['pageNumber', 'pageCount', 'pageSize', 'nextPage'].filter((k) => typeof out[k] === 'number')
    if (paging.length > 0 && this.#draw('api.paging-numbers', ['number', 'string'] as const) === 'string') {
      out = { ...out }
      for (const k of paging) out[k] = String(out[k])
    }
    return out
  }

  #draw<T extends string>(aspect: string, variants: readonly T[]): T {
    const variant = this.#rng.pick(variants)
    const key = `${aspect}=${variant}`
    const seen = this.#drawn.get(key) ?? 0
    this.#drawn.set(key, seen + 1)
    if (seen === 0) this.#logger?.info({ contractDrift: aspect, variant, seed: this.seed }, `contract drift: ${aspect} drawn as ${variant} (logged once; counted in /__admin/stats)`)
    return variant
  }
}

function reasonOf(body: unknown): unknown {
  const errors = (body as { errors?: Array<{ parameters?: { REASON?: unknown } | null }> } | null)?.errors
  return Array.isArray(errors) ? errors[0]?.parameters?.REASON : undefined
}
