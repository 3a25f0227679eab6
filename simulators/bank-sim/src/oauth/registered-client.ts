import { BankSimConfigError } from '../errors.ts'

/** An application registered with the bank (a TPP). */
export interface RegisteredClient {
  clientId: string
  clientSecret: string
  /** Redirect URIs registered for the authorization-code flow (exact string match). */
  redirectUris: string[]
  name?: string
}

/** Defaults match `BANK_CLIENT_ID`, `BANK_CLIENT_SECRET`, `BANK_REDIRECT_URI` of the pipeline's configuration. */
export const DEFAULT_REGISTERED_CLIENT: RegisteredClient = {
  clientId: 'tep-sim-client',
  clientSecret: 'tep-sim-secret',
  redirectUris: ['http://127.0.0.1:8190/consents/callback'],
  name: 'Transaction enrichment pipeline',
}

export function validateClient(c: RegisteredClient): RegisteredClient {
  if (!c.clientId || !c.clientSecret) throw new BankSimConfigError('a registered client needs clientId and clientSecret')
  if (c.redirectUris.length === 0) throw new BankSimConfigError(`client ${c.clientId} needs at least one redirect URI`)
  for (const uri of c.redirectUris) {
    let u: URL
    try {
      u = new URL(uri)
    } catch {
      throw new BankSimConfigError(`redirect URI of client ${c.clientId} is not a URL: ${uri}`)
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new BankSimConfigError(`redirect URI of client ${c.clientId} must be http(s): ${uri}`)
    if (u.hash) throw new BankSimConfigError(`redirect URI of client ${c.clientId} must not have a fragment (RFC 6749 §3.1.2): ${uri}`)
  }
  return { ...c, redirectUris: [...c.redirectUris] }
}

/** True when `url` has the origin of one of the client's registered redirect URIs (the rule for sign return URLs). */
export function sameOriginAsRegistered(client: RegisteredClient, url: string): boolean {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return false
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false
  return client.redirectUris.some((r) => new URL(r).origin === u.origin)
}
