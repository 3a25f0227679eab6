import { describe, expect, it } from 'vitest'
import { decodeJwt } from 'jose'
import { ApiError } from '../errors.ts'
import { SimClock } from './sim-clock.ts'
import { TOKEN_TTL_SECONDS, TokenService } from './token-service.ts'

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'accepted'
  } catch (err) {
    return err instanceof ApiError ? `${err.status} ${err.code}` : String(err)
  }
}

describe('TokenService', () => {
  it('issues a JWT with exp = iat + 300 and the granted scopes', async () => {
    const tokens = new TokenService(new SimClock())
    const { token, expiresIn } = await tokens.issue('sim-client', ['find', 'read'])
    const claims = decodeJwt(token)
    expect(expiresIn).toBe(300)
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(TOKEN_TTL_SECONDS)
    expect(claims.sub).toBe('sim-client')
    expect(await tokens.verify(token)).toEqual({ key: 'client:sim-client', scopes: ['find', 'read'] })
  })

  it('rejects the token once 300 s of simulator time have passed, even after it was verified once', async () => {
    const clock = new SimClock()
    const tokens = new TokenService(clock)
    const { token } = await tokens.issue('c', ['find'])
    await tokens.verify(token)
    clock.advance(299_000)
    expect(await codeOf(tokens.verify(token))).toBe('accepted')
    clock.advance(1_000)
    expect(await codeOf(tokens.verify(token))).toBe('401 TOKEN_EXPIRED')
    // A fresh verifier (no cache) agrees.
    const unseen = await tokens.issue('c', ['find'])
    clock.advance(301_000)
    expect(await codeOf(tokens.verify(unseen.token))).toBe('401 TOKEN_EXPIRED')
  })

  it('rejects revoked, tampered and foreign tokens', async () => {
    const tokens = new TokenService(new SimClock())
    const { token } = await tokens.issue('c', ['find'])
    const [h, p, s] = token.split('.')
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(token), scope: 'find read invalidations suggestions' })).toString('base64url')}.${s}`
    expect(await codeOf(tokens.verify(tampered))).toBe('401 INVALID_TOKEN')
    expect(await codeOf(tokens.verify(`${h}.${p}`))).toBe('401 INVALID_TOKEN')
    const other = new TokenService(new SimClock())
    expect(await codeOf(other.verify(token))).toBe('401 INVALID_TOKEN')
    tokens.revokeAll()
    expect(await codeOf(tokens.verify(token))).toBe('401 TOKEN_REVOKED')
    const fresh = await tokens.issue('c', ['find'])
    expect(await codeOf(tokens.verify(fresh.token))).toBe('accepted')
  })
})
