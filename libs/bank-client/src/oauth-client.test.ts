import { afterAll, describe, expect, it } from 'vitest'
import { createBankClient } from './bank-client.ts'
import { BankAuthorizationCallbackError, BankInvalidArgumentError } from './errors.ts'
import { generateState } from './oauth-client.ts'

const client = createBankClient({
  baseUrl: 'https://bank.example/psd2',
  baseUrls: { cardsAuthorization: 'https://cards-auth.example' },
  clientId: 'app 1',
  clientSecret: 's3cret',
  redirectUri: 'https://app.example/callback',
  tppName: 'TEP',
})
afterAll(() => client.close())

describe('OAuthClient.buildAuthorizationUrl', () => {
  it('builds the authorize URL with every required parameter, percent-encoded', () => {
    const state = generateState()
    const url = new URL(client.authorization.buildAuthorizationUrl({ scope: 'AISP', state }))
    expect(url.origin + url.pathname).toBe('https://bank.example/psd2/oauth2/authorize')
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'app 1',
      redirect_uri: 'https://app.example/callback',
      scope: 'AISP',
      state,
    })
    expect(url.search).toContain('client_id=app%201')
  })

  it('routes CISP to the cards provider and honours another redirect URI', () => {
    const url = new URL(
      client.authorization.buildAuthorizationUrl({
        scope: 'CISP',
        state: generateState(),
        redirectUri: 'https://app.example/cards',
      }),
    )
    expect(url.origin).toBe('https://cards-auth.example')
    expect(url.searchParams.get('redirect_uri')).toBe('https://app.example/cards')
  })

  it('refuses unknown scopes and weak states', () => {
    expect(() =>
      client.authorization.buildAuthorizationUrl({ scope: 'aisp' as never, state: generateState() }),
    ).toThrow(/scope must be one of AISP, PISP, CISP/)
    expect(() => client.authorization.buildAuthorizationUrl({ scope: 'PISP', state: 'abc' })).toThrow(
      BankInvalidArgumentError,
    )
  })
})

describe('OAuthClient.parseCallback', () => {
  const state = generateState()
  const cb = (q: string) => `https://app.example/callback?${q}`

  it('returns the code when the state matches', () => {
    expect(client.authorization.parseCallback(cb(`code=abc&state=${state}`), state)).toEqual({ code: 'abc' })
  })

  it.each([
    [`code=abc&state=other`, 'AUTHORIZATION_STATE_MISMATCH'],
    [`code=abc`, 'AUTHORIZATION_STATE_MISMATCH'],
    [`error=access_denied&state=${state}`, 'AUTHORIZATION_DENIED'],
    [`error=invalid_scope&state=${state}`, 'AUTHORIZATION_CALLBACK_INVALID'],
    [`state=${state}`, 'AUTHORIZATION_CALLBACK_INVALID'],
  ])('%s → %s', (query, code) => {
    try {
      client.authorization.parseCallback(cb(query), state)
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(BankAuthorizationCallbackError)
      expect((err as BankAuthorizationCallbackError).code).toBe(code)
    }
  })
})
