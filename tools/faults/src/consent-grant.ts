/**
 * A consent granted through the running gateway and bank simulator, step by
 * step as a browser does it. It needs only the URLs and secrets below, so it
 * does not depend on the FaultSystem that grants consents with it.
 */
import { mintCustomerToken } from '@tep/bank-sync'

/** The part of a running fault system the consent flow uses. */
export interface ConsentFlowSystem {
  readonly gatewayUrl: string
  readonly bankUrl: string
  readonly secrets: { readonly customerTokenKey: string; readonly observed: Set<string> }
  readonly customerOf: Map<string, string>
}

interface Started {
  consentId: string
  state: string
  /** PKCE S256 challenge the gateway put in the authorization URL (the bank checks the verifier). */
  codeChallenge: string | undefined
  /** The binding cookie of the browser that started the flow (`name=value`). */
  cookie: string
}

/** Starts a consent as the bank application and its customer's browser do: customer token in, binding cookie out. */
export async function startConsent(system: ConsentFlowSystem, customerId: string): Promise<Started> {
  const token = await mintCustomerToken(Buffer.from(system.secrets.customerTokenKey, 'base64'), customerId)
  const res = await fetch(`${system.gatewayUrl}/consents`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({}) })
  if (res.status !== 201) throw new Error(`POST /consents answered ${res.status}: ${await res.text()}`)
  const { consentId, authorizationUrl } = (await res.json()) as { consentId: string; authorizationUrl: string }
  const params = new URL(authorizationUrl).searchParams
  return {
    consentId,
    state: params.get('state') ?? '',
    codeChallenge: params.get('code_challenge') ?? undefined,
    cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '',
  }
}

/** Grants at the bank simulator (as the user clicking "Grant") and returns the redirect to the gateway, whose code the run remembers. */
export async function grantAtBank(system: ConsentFlowSystem, username: string, started: Pick<Started, 'state' | 'codeChallenge'>): Promise<{ redirectUrl: string; bankConsentId: string }> {
  const grant = await fetch(`${system.bankUrl}/__admin/consents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, scope: 'AISP', state: started.state, codeChallenge: started.codeChallenge }) })
  if (grant.status !== 201) throw new Error(`bank simulator did not grant for ${username}: ${grant.status} ${await grant.text()}`)
  const body = (await grant.json()) as { redirectUrl: string; code: string; consentId: string }
  system.secrets.observed.add(body.code)
  return { redirectUrl: body.redirectUrl, bankConsentId: body.consentId }
}

/** A consent granted end to end through the gateway, as `npm start` does. */
export async function grantConsent(system: ConsentFlowSystem, username: string, customerId: string): Promise<{ consentId: string; bankConsentId: string }> {
  const started = await startConsent(system, customerId)
  system.customerOf.set(started.consentId, customerId)
  const { redirectUrl, bankConsentId } = await grantAtBank(system, username, started)
  const callback = await fetch(redirectUrl, { headers: { accept: 'application/json', cookie: started.cookie } })
  if (callback.status !== 201) throw new Error(`consent gateway callback answered ${callback.status}: ${await callback.text()}`)
  return { consentId: started.consentId, bankConsentId }
}
