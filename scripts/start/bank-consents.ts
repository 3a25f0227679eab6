/**
 * `npm start` step of bank-sync: grants sample bank consents the way a customer
 * would, through the consent gateway (POST /consents → the bank's consent pages,
 * skipped with the bank simulator's admin shortcut → the bank's redirect to the
 * gateway callback), so that their accounts' transactions flow into enrichment.
 */
import { DEVELOPMENT_CUSTOMER_TOKEN_KEY, mintCustomerToken } from '@tep/bank-sync'

export async function grantSampleConsents(options: {
  gatewayUrl: string
  bankUrl: string
  users: Array<{ username: string; customerId: string }>
}): Promise<string[]> {
  const granted: string[] = []
  for (const { username, customerId } of options.users) {
    // As the bank application would: a short-lived customer token signed with the key it
    // shares with the gateway (bank-sync uses the public development key against the loopback sim).
    const token = await mintCustomerToken(DEVELOPMENT_CUSTOMER_TOKEN_KEY, customerId)
    const started = await fetch(`${options.gatewayUrl}/consents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({}),
    })
    if (started.status !== 201)
      throw new Error(`consent gateway POST /consents answered ${started.status}: ${await started.text()}`)
    const { consentId, authorizationUrl } = (await started.json()) as {
      consentId: string
      authorizationUrl: string
    }
    const params = new URL(authorizationUrl).searchParams
    const state = params.get('state')
    const codeChallenge = params.get('code_challenge') ?? undefined
    // The browser's binding cookie, sent back with the callback.
    const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    const grant = await fetch(`${options.bankUrl}/__admin/consents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, scope: 'AISP', state, codeChallenge }),
    })
    if (grant.status !== 201)
      throw new Error(
        `bank simulator did not grant the consent of ${username}: ${grant.status} ${await grant.text()}`,
      )
    const { redirectUrl } = (await grant.json()) as { redirectUrl: string }
    const callback = await fetch(redirectUrl, { headers: { accept: 'application/json', cookie } })
    if (callback.status !== 201)
      throw new Error(`consent gateway callback answered ${callback.status}: ${await callback.text()}`)
    granted.push(consentId)
  }
  return granted
}
