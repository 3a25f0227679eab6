/**
 * The bank-consent steps the deployed-stack tests share: a consent granted
 * through the published consent gateway as the bank application would, and the
 * wait for the enriched transactions its first sync brings.
 */
import { DEVELOPMENT_CUSTOMER_TOKEN_KEY, mintCustomerToken } from '@tep/bank-sync'
import type { EnrichedTransaction } from '@tep/schemas'
import { expect } from 'vitest'
import { waitFor } from '../support/wait-for.ts'

/**
 * A customer token signed with the gateway's (public development) key, the
 * bank's consent pages (skipped with the simulator's admin shortcut) and the
 * redirect back to the gateway, followed with the binding cookie. Returns the
 * redirect the bank sent the browser to.
 */
export async function grantConsentThroughGateway(
  urls: { gateway: string; bank: string },
  customerId: string,
): Promise<{ redirectUrl: string }> {
  const token = await mintCustomerToken(DEVELOPMENT_CUSTOMER_TOKEN_KEY, customerId)
  const started = await fetch(`${urls.gateway}/consents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: '{}',
  })
  expect(started.status, await started.clone().text()).toBe(201)
  const { authorizationUrl } = (await started.json()) as { authorizationUrl: string }
  const params = new URL(authorizationUrl).searchParams
  const granted = await fetch(`${urls.bank}/__admin/consents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      username: 'user1',
      scope: 'AISP',
      state: params.get('state'),
      codeChallenge: params.get('code_challenge') ?? undefined,
    }),
  })
  expect(granted.status, await granted.clone().text()).toBe(201)
  const { redirectUrl } = (await granted.json()) as { redirectUrl: string }
  const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const callback = await fetch(redirectUrl, { headers: { accept: 'application/json', cookie } })
  expect(callback.status, await callback.clone().text()).toBe(201)
  return { redirectUrl }
}

/** The enriched bank transactions of `customerId`, once one of them is MATCHED. */
export function matchedBankTransactionsOf(
  enriched: ReadonlyMap<string, EnrichedTransaction>,
  customerId: string,
  timeoutMs: number,
): Promise<EnrichedTransaction[]> {
  const ofCustomer = () =>
    [...enriched.values()].filter((e) => e.raw.source === 'BANK_SYNC' && e.raw.customerId === customerId)
  return waitFor(
    `a matched bank transaction of ${customerId}`,
    () => ofCustomer().some((r) => r.status === 'MATCHED') && ofCustomer(),
    { timeoutMs },
  )
}
