import { timingSafeEqual } from 'node:crypto'

/** Rights an access token or Basic user carries; each operation needs one. */
export const SCOPES = ['find', 'read', 'invalidations', 'suggestions'] as const
export type Scope = (typeof SCOPES)[number]

export interface ClientCredential {
  id: string
  secret: string
  scopes: readonly Scope[]
}

export interface BasicCredential {
  user: string
  password: string
  scopes: readonly Scope[]
}

export interface CredentialsConfig {
  clients: readonly ClientCredential[]
  basicUsers: readonly BasicCredential[]
}

export const DEFAULT_CREDENTIALS: CredentialsConfig = {
  clients: [
    { id: 'sim-client', secret: 'sim-secret', scopes: SCOPES },
    { id: 'sim-limited', secret: 'sim-limited-secret', scopes: ['find', 'read'] },
  ],
  basicUsers: [{ user: 'sim-user', password: 'sim-password', scopes: SCOPES }],
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/** Who is calling, once authenticated; `key` names the credential for rate limits and stats. */
export interface Principal {
  key: string
  scopes: readonly Scope[]
}

export class CredentialStore {
  readonly #config: CredentialsConfig

  constructor(config: CredentialsConfig) {
    this.#config = config
  }

  client(id: string, secret: string): ClientCredential | undefined {
    const client = this.#config.clients.find((c) => c.id === id)
    return client !== undefined && sameText(client.secret, secret) ? client : undefined
  }

  basic(user: string, password: string): BasicCredential | undefined {
    const found = this.#config.basicUsers.find((u) => u.user === user)
    return found !== undefined && sameText(found.password, password) ? found : undefined
  }
}

/** Splits an `Authorization: Basic ...` value; undefined when it is not well-formed Basic. */
export function parseBasic(header: string): { user: string; password: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header)
  if (match === null) return undefined
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}
