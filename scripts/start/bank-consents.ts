/**
 * `npm start` step of bank-sync: grants sample bank consents the way a customer
 * would, through the consent gateway (POST /consents → the bank's consent pages,
 * skipped with the bank simulator's admin shortcut → the bank's redirect to the
 * gateway callback), so that their accounts' transactions flow into enrichment.
 */
export async function grantSampleConsents(options: {
  gatewayUrl: string
  bankUrl: string
  users: Array<{ username: string; customerId: string }>
}): Promise<string[]> {
  const granted: string[] = []
  for (const { username, customerId } of options.users) {
    const started = await fetch(`${options.gatewayUrl}/consents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId }),
    })
    if (started.status !== 201)
      throw new Error(`consent gateway POST /consents answered ${started.status}: ${await started.text()}`)
    const { consentId, authorizationUrl } = (await started.json()) as {
      consentId: string
      authorizationUrl: string
    }
    const state = new URL(authorizationUrl).searchParams.get('state')
    const grant = await fetch(`${options.bankUrl}/__admin/consents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, scope: 'AISP', state }),
    })
    if (grant.status !== 201)
      throw new Error(
        `bank simulator did not grant the consent of ${username}: ${grant.status} ${await grant.text()}`,
      )
    const { redirectUrl } = (await grant.json()) as { redirectUrl: string }
    const callback = await fetch(redirectUrl, { headers: { accept: 'application/json' } })
    if (callback.status !== 201)
      throw new Error(`consent gateway callback answered ${callback.status}: ${await callback.text()}`)
    granted.push(consentId)
  }
  return granted
}
