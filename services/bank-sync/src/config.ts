import { bankApiVars, envVar, isLoopbackHost, kafkaVars, observabilityVars, parse, tracingVars } from '@tep/config'
import { TOPICS } from '@tep/kafka'
import { createKeyring, decodeKey, parseKeyring, type Keyring } from '@tep/token-cipher'
import { z } from 'zod'
import { BankSyncConfigError } from './errors.ts'

export const bankSyncEnv = {
  ...kafkaVars,
  ...observabilityVars,
  ...bankApiVars,
  TOKEN_ENCRYPTION_KEY: envVar(
    z.string().min(1),
    'base64 of 32 bytes: AES-256-GCM key for tokens at rest (or id1:BASE64,id2:BASE64 for rotation, first active). ' +
      'Required unless BANK_SYNC_DEVELOPMENT_KEYS=true (then a public DEVELOPMENT key, logged)',
    { optional: true, secret: true },
  ),
  BANK_SYNC_DEVELOPMENT_KEYS: envVar(
    parse.boolean,
    'true: an unset TOKEN_ENCRYPTION_KEY or CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY falls back to a fixed, PUBLIC development key (npm start, tests, the loopback simulator only; refused for a non-loopback BANK_API_URL). ' +
      'Never inferred: without it, both keys are required',
    { default: 'false' },
  ),
  TOKEN_ENCRYPTION_KEY_ID: envVar(
    z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'expected 1-32 letters, digits, - or _'),
    'id stored with every ciphertext when TOKEN_ENCRYPTION_KEY is a single bare key',
    { default: 'k1' },
  ),
  CONSENT_GATEWAY_PORT: envVar(
    parse.port,
    'port of the consent gateway (POST /consents, GET /consents/callback, ...)',
    {
      default: '8190',
    },
  ),
  CONSENT_GATEWAY_HOST: envVar(z.string().min(1), 'interface the consent gateway listens on', {
    default: '127.0.0.1',
  }),
  CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: envVar(
    z.string().min(1),
    'base64 of at least 32 bytes: HMAC key (HS256) of the short-lived customer tokens the bank application signs for the gateway (docs/security.md); ' +
      'or kid1:BASE64,kid2:BASE64 while rotating (a token naming a kid is checked with that key only). ' +
      'Required unless BANK_SYNC_DEVELOPMENT_KEYS=true (then a public DEVELOPMENT key, logged)',
    { optional: true, secret: true },
  ),
  CONSENT_GATEWAY_TOKEN_AUDIENCE: envVar(z.string().min(1), '`aud` the customer tokens must carry', {
    default: 'tep-consent-gateway',
  }),
  CONSENT_GATEWAY_TOKEN_ISSUER: envVar(z.string().min(1), '`iss` the customer tokens must carry (not checked when unset)', {
    optional: true,
  }),
  CONSENT_GATEWAY_TOKEN_MAX_LIFETIME: envVar(
    parse.duration,
    'longest exp - iat accepted in a customer token (tokens are meant to be minted per request)',
    { default: '5m' },
  ),
  CONSENT_GATEWAY_CALLBACK_CONCURRENCY: envVar(
    parse.integer(1, 16),
    'authorization-code exchanges of consent callbacks at the same time (their own bank token budget)',
    { default: '2' },
  ),
  CONSENT_GATEWAY_CALLBACK_QUEUE: envVar(
    parse.integer(0, 1000),
    'consent callbacks waiting for an exchange slot; beyond this the callback is answered 503 with Retry-After',
    { default: '16' },
  ),
  CONSENT_GATEWAY_REQUEST_TIMEOUT: envVar(
    parse.duration,
    'a request (headers and body) must arrive within this, else 408 and the connection is closed (slow clients); headers within 5 s at most',
    { default: '10s' },
  ),
  CONSENT_GATEWAY_MAX_CONNECTIONS: envVar(parse.integer(1, 100_000), 'open connections to the consent gateway at once; beyond, new ones are dropped', {
    default: '256',
  }),
  CONSENT_GATEWAY_CUSTOMER_LIMIT: envVar(
    parse.integer(1, 10_000),
    'consent starts, and callbacks, per customer and 10 minutes on one instance; beyond, 429 with Retry-After',
    { default: '10' },
  ),
  BANK_SYNC_REPLICAS: envVar(
    parse.integer(1, 64),
    "instances running with this BANK_CLIENT_ID: each takes 1/replicas of the bank's token endpoint budget (900 calls per 6 min per client id), callbacks and refreshes alike",
    { default: '1' },
  ),
  BANK_PKCE: envVar(
    z.enum(['S256', 'off']),
    'PKCE for the authorization code (S256, or off for a bank that refuses it: only with KAFKA_ALLOW_INSECURE=true, the one switch for insecure settings, logged at every start)',
    { default: 'S256' },
  ),
  SYNC_INTERVAL: envVar(
    parse.duration,
    'pause between two syncs of one consent (PSD2 allows 4 unattended reads per account and day: keep it at 6h or more against a real bank)',
    { default: '6h' },
  ),
  SYNC_JITTER: envVar(
    parse.duration,
    'random extra delay (0..this) added to each pause, so consents spread out',
    {
      default: '10m',
    },
  ),
  SYNC_CONCURRENCY: envVar(parse.integer(1, 64), 'consents of one partition synced at the same time', {
    default: '4',
  }),
  BANK_OVERLAP_DAYS: envVar(
    parse.integer(0, 30),
    'days re-read before the watermark (late bookings, pending to booked)',
    {
      default: '3',
    },
  ),
  BANK_PAGE_SIZE: envVar(
    parse.integer(10, 100),
    'transactions per page asked from the bank (the bank allows 10..100)',
    {
      default: '100',
    },
  ),
  BANK_BACKFILL_DAYS: envVar(
    parse.integer(1, 3650),
    'history read on the first sync right after consent (beyond 89 days only while the token is fresh)',
    { default: '365' },
  ),
  CONSENT_EXPIRY_WARNING: envVar(
    parse.duration,
    'announce an accounts consent as EXPIRING this long before its 90 days end',
    {
      default: '7d',
    },
  ),
  BANK_SYNC_GROUP_ID: envVar(
    z.string().min(1),
    'consumer group of the consents topic (instances share consents by partition)',
    {
      default: 'bank-sync',
    },
  ),
  BANK_SYNC_INSTANCE_ID: envVar(
    z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'expected 1-249 letters, digits, dot, dash or underscore'),
    'static member name in the consents group (KIP-345), unique per live instance: the pod or container name. ' +
      'A restart with the same name gets its partitions back at once instead of after the 30 s session timeout. Unset: dynamic membership',
    { optional: true },
  ),
  BANK_CONSENTS_TOPIC: envVar(
    parse.nonEmpty,
    'consents (compacted): read to own consents, written by the gateway and the sync',
    {
      default: TOPICS.bankConsents,
    },
  ),
  BANK_TRANSACTIONS_TOPIC: envVar(parse.nonEmpty, 'bank transaction records (ADDED / MODIFIED)', {
    default: TOPICS.bankTransactions,
  }),
  BANK_RAW_TOPIC: envVar(parse.nonEmpty, 'raw transactions handed to enrichment', {
    default: TOPICS.transactionsRaw,
  }),
  BANK_SYNC_TRANSACTIONAL_ID_PREFIX: envVar(
    z.string().regex(/^[A-Za-z0-9._-]+$/, 'expected letters, digits, dot, dash or underscore'),
    'prefix of the per-partition transactional ids (<prefix>-<partition>)',
    { default: 'bank-sync' },
  ),
  // Last: rarely set, and @tep/tracing validates them itself.
  ...tracingVars,
}

/**
 * A fixed key for `npm start` against the loopback simulator only. It is public
 * (it is in the source), so tokens sealed with it are not protected. Used only when
 * BANK_SYNC_DEVELOPMENT_KEYS=true says so: never inferred from BANK_API_URL, since a
 * loopback address is also what a bank's egress sidecar or proxy looks like.
 */
export const DEVELOPMENT_TOKEN_KEY = Buffer.from('tep-bank-sync-DEVELOPMENT-ONLY!!', 'utf8')
export const DEVELOPMENT_KEY_ID = 'dev-insecure'

/** Public like DEVELOPMENT_TOKEN_KEY: customer tokens for `npm start` against the loopback simulator only. */
export const DEVELOPMENT_CUSTOMER_TOKEN_KEY = Buffer.from('tep-consent-gateway-DEVELOPMENT-ONLY-customer-token', 'utf8')

interface DevelopmentSwitch {
  BANK_SYNC_DEVELOPMENT_KEYS?: boolean | undefined
  BANK_API_URL: string
}

/**
 * Whether `name`, unset, may fall back to its public development key: only with the
 * explicit switch, and even then never for a bank that is not on loopback (a switch
 * left on by mistake against a real bank must not hand out public keys).
 */
function assertDevelopmentKeyAllowed(cfg: DevelopmentSwitch, name: string, how: string): void {
  if (cfg.BANK_SYNC_DEVELOPMENT_KEYS !== true) {
    throw new BankSyncConfigError(
      `${name} is not set: set it to ${how}. ` +
        'Only for development against the loopback simulator, BANK_SYNC_DEVELOPMENT_KEYS=true uses a fixed, public key instead ' +
        '(TOKEN_ENCRYPTION_KEY and CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY are then both optional)',
    )
  }
  if (!isLoopbackHost(new URL(cfg.BANK_API_URL).hostname)) {
    throw new BankSyncConfigError(
      `${name} is required when BANK_API_URL is not a loopback simulator, even with BANK_SYNC_DEVELOPMENT_KEYS=true: set it to ${how}`,
    )
  }
}

export function resolveCustomerTokenKey(cfg: {
  CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY?: string | undefined
  BANK_SYNC_DEVELOPMENT_KEYS?: boolean | undefined
  BANK_API_URL: string
}): { key: Buffer | ReadonlyMap<string, Buffer>; development: boolean } {
  const raw = cfg.CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY
  if (raw === undefined) {
    assertDevelopmentKeyAllowed(
      cfg,
      'CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY',
      'base64 of 32 random bytes (openssl rand -base64 32) shared with the bank application that signs customer tokens',
    )
    return { key: DEVELOPMENT_CUSTOMER_TOKEN_KEY, development: true }
  }
  if (raw.includes(':') || raw.includes(',')) return { key: parseCustomerTokenKeys(raw), development: false }
  return { key: decodeCustomerTokenKey(raw, 'CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY'), development: false }
}

/**
 * Rotation: `kid1:BASE64,kid2:BASE64`. A token naming a `kid` is checked with that key, a
 * token without one with each (docs/security.md, "Customer tokens"). The value is secret:
 * errors name the entry, never echo it.
 */
function parseCustomerTokenKeys(raw: string): ReadonlyMap<string, Buffer> {
  const keys = new Map<string, Buffer>()
  for (const [i, entry] of raw.split(',').map((e) => e.trim()).filter((e) => e !== '').entries()) {
    const colon = entry.indexOf(':')
    const id = colon === -1 ? '' : entry.slice(0, colon)
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) {
      throw new BankSyncConfigError(
        `CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY entry ${i + 1} must be kid:BASE64 (a kid of letters, digits, ".", "_" or "-")`,
      )
    }
    if (keys.has(id)) throw new BankSyncConfigError(`CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY names the kid "${id}" twice`)
    keys.set(id, decodeCustomerTokenKey(entry.slice(colon + 1), `CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY key "${id}"`))
  }
  if (keys.size === 0) throw new BankSyncConfigError('CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY lists no key')
  return keys
}

function decodeCustomerTokenKey(raw: string, label: string): Buffer {
  const text = raw.trim()
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(text)
    ? Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
    : Buffer.alloc(0)
  if (key.length < 32) {
    throw new BankSyncConfigError(
      `${label} must be base64 of at least 32 bytes (openssl rand -base64 32), got ${key.length} bytes`,
    )
  }
  return key
}

export function resolveKeyring(cfg: {
  TOKEN_ENCRYPTION_KEY?: string | undefined
  TOKEN_ENCRYPTION_KEY_ID: string
  BANK_SYNC_DEVELOPMENT_KEYS?: boolean | undefined
  BANK_API_URL: string
}): { keyring: Keyring; development: boolean } {
  const raw = cfg.TOKEN_ENCRYPTION_KEY
  if (raw === undefined) {
    assertDevelopmentKeyAllowed(cfg, 'TOKEN_ENCRYPTION_KEY', 'base64 of 32 random bytes (openssl rand -base64 32)')
    return {
      keyring: createKeyring([{ id: DEVELOPMENT_KEY_ID, key: DEVELOPMENT_TOKEN_KEY }]),
      development: true,
    }
  }
  if (raw.includes(':') || raw.includes(',')) return { keyring: parseKeyring(raw), development: false }
  return {
    keyring: createKeyring([
      { id: cfg.TOKEN_ENCRYPTION_KEY_ID, key: decodeKey(raw, 'TOKEN_ENCRYPTION_KEY') },
    ]),
    development: false,
  }
}

/** The loopback simulator's registered client: what `npm start` and docker-compose run against. */
export const DEVELOPMENT_BANK_CLIENT = {
  clientId: 'tep-sim-client',
  clientSecret: 'tep-sim-secret',
  redirectUri: 'http://127.0.0.1:8190/consents/callback',
} as const

/**
 * The bank OAuth client. Each value is required; only with BANK_SYNC_DEVELOPMENT_KEYS=true
 * and a loopback BANK_API_URL does an unset one fall back to the simulator's (`development`
 * says so, and main logs it). Every missing value is named at once.
 */
export function resolveBankClient(cfg: {
  BANK_CLIENT_ID?: string | undefined
  BANK_CLIENT_SECRET?: string | undefined
  BANK_REDIRECT_URI?: string | undefined
  BANK_SYNC_DEVELOPMENT_KEYS?: boolean | undefined
  BANK_API_URL: string
}): { clientId: string; clientSecret: string; redirectUri: string; development: boolean } {
  const missing = (
    [
      ['BANK_CLIENT_ID', cfg.BANK_CLIENT_ID],
      ['BANK_CLIENT_SECRET', cfg.BANK_CLIENT_SECRET],
      ['BANK_REDIRECT_URI', cfg.BANK_REDIRECT_URI],
    ] as const
  )
    .filter(([, v]) => v === undefined)
    .map(([name]) => name)
  if (missing.length > 0) {
    if (cfg.BANK_SYNC_DEVELOPMENT_KEYS !== true) {
      throw new BankSyncConfigError(
        `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set: set ${missing.length === 1 ? 'it' : 'them'} to the client registered with the bank. ` +
          "Only for development against the loopback simulator, BANK_SYNC_DEVELOPMENT_KEYS=true uses the simulator's client instead",
      )
    }
    if (!isLoopbackHost(new URL(cfg.BANK_API_URL).hostname)) {
      throw new BankSyncConfigError(
        `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required when BANK_API_URL is not a loopback simulator, even with BANK_SYNC_DEVELOPMENT_KEYS=true`,
      )
    }
  }
  return {
    clientId: cfg.BANK_CLIENT_ID ?? DEVELOPMENT_BANK_CLIENT.clientId,
    clientSecret: cfg.BANK_CLIENT_SECRET ?? DEVELOPMENT_BANK_CLIENT.clientSecret,
    redirectUri: cfg.BANK_REDIRECT_URI ?? DEVELOPMENT_BANK_CLIENT.redirectUri,
    development: missing.length > 0,
  }
}

/**
 * PKCE on, unless BANK_PKCE=off AND the project's one switch for insecure settings,
 * KAFKA_ALLOW_INSECURE=true, says it is meant: without PKCE a leaked authorization code can be
 * exchanged by whoever holds the client secret. Returns `insecure` for main to log on every start.
 */
export function resolvePkce(cfg: { BANK_PKCE: 'S256' | 'off' }, env: Record<string, string | undefined>): { pkce: boolean; insecure: boolean } {
  if (cfg.BANK_PKCE === 'S256') return { pkce: true, insecure: false }
  if (env.KAFKA_ALLOW_INSECURE?.trim().toLowerCase() !== 'true') {
    throw new BankSyncConfigError(
      'BANK_PKCE=off is refused unless KAFKA_ALLOW_INSECURE=true (the switch for insecure settings): keep BANK_PKCE=S256 unless the bank refuses PKCE',
    )
  }
  return { pkce: false, insecure: true }
}
