import {
  HttpAbortedError,
  HttpNetworkError,
  HttpStatusError,
  ThrottledError,
  type RequestContext,
} from '@tep/http'
import { describe, expect, it } from 'vitest'
import { parseCobsErrors, parseOAuthError } from './error-body.ts'
import { toBankError, toBankTokenError } from './error-mapping.ts'
import {
  BankAccessTokenExpiredError,
  BankConsentRevokedError,
  BankForbiddenError,
  BankHistoryRequiresFreshTokenError,
  BankNotFoundError,
  BankOAuthError,
  BankRequestRejectedError,
  BankThrottledError,
  BankUnauthorizedError,
  BankUnavailableError,
  BankUnexplainedUnauthorizedError,
  InstantPaymentRefusedError,
} from './errors.ts'

const ctx: RequestContext = { operation: 'op', method: 'GET', url: 'http://127.0.0.1/x', attempt: 1 }
const now = new Date('2026-06-30T10:00:00Z')
const call = { operation: 'bank.accounts.getTransactions', requestId: 'rid-1', now }

function status(code: number, body: unknown, retriable = false): HttpStatusError {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  return new HttpStatusError(ctx, {
    status: code,
    retriable,
    bodySnippet: text.slice(0, 100),
    bodyText: text,
    headers: {},
  })
}
const cobs = (error: string, extra: Record<string, unknown> = {}) => ({ errors: [{ error, ...extra }] })

describe('toBankError', () => {
  it('tells the 90-day history refusal apart from a revoked consent by the body', () => {
    const history = toBankError(
      status(401, cobs('UNAUTHORISED', { scope: 'dateFrom', parameters: { REASON: 'SCA_REQUIRED' } })),
      {
        ...call,
        dateFrom: '2026-01-01',
      },
    )
    expect(history).toBeInstanceOf(BankHistoryRequiresFreshTokenError)
    expect(history).toMatchObject({
      code: 'HISTORY_REQUIRES_FRESH_TOKEN',
      dateFrom: '2026-01-01',
      requestId: 'rid-1',
      status: 401,
    })

    for (const reason of ['TOKEN_REVOKED', 'CONSENT_EXPIRED']) {
      const revoked = toBankError(status(401, cobs('UNAUTHORISED', { parameters: { REASON: reason } })), {
        ...call,
        dateFrom: '2026-01-01',
      })
      expect(revoked).toBeInstanceOf(BankConsentRevokedError)
      expect((revoked as BankConsentRevokedError).code).toBe('CONSENT_REVOKED')
      expect((revoked as BankConsentRevokedError).reason).toBe(reason)
    }
  })

  it('falls back to the request dateFrom when the bank gives no reason', () => {
    const bare = status(401, '')
    expect(toBankError(bare, { ...call, dateFrom: '2026-03-31' })).toBeInstanceOf(
      BankHistoryRequiresFreshTokenError,
    ) // 91 days
    expect(toBankError(bare, { ...call, dateFrom: '2026-04-01' })).toBeInstanceOf(BankUnexplainedUnauthorizedError) // 90 days
    expect(toBankError(bare, call)).toBeInstanceOf(BankUnexplainedUnauthorizedError)
  })

  it('never reads a 401 that does not say revoked or expired as the end of the consent', () => {
    // A bare 401 (perhaps an expired access token at a bank that says no more), TOKEN_UNKNOWN,
    // a reason nobody modelled, an empty COBS body: refresh and retry, not "consent over".
    for (const body of ['', '<html>401</html>', { errors: [] }, cobs('UNAUTHORISED'), cobs('UNAUTHORISED', { parameters: { REASON: 'TOKEN_UNKNOWN' } }), cobs('UNAUTHORISED', { parameters: { REASON: 'INVALID_TOKEN' } })]) {
      const err = toBankError(status(401, body), call)
      expect(err, JSON.stringify(body)).toBeInstanceOf(BankUnexplainedUnauthorizedError)
      expect(err).not.toBeInstanceOf(BankConsentRevokedError)
      expect(err).toMatchObject({ code: 'UNAUTHORIZED_UNEXPLAINED', status: 401, retriable: false })
    }
    expect((toBankError(status(401, ''), call) as Error).message).toMatch(/no reason.*refresh the tokens and call once more/)
  })

  it('maps an expired access token and a rejected client id to their own errors', () => {
    expect(
      toBankError(status(401, cobs('UNAUTHORISED', { parameters: { REASON: 'TOKEN_EXPIRED' } })), call),
    ).toBeInstanceOf(BankAccessTokenExpiredError)
    const client = toBankError(status(401, cobs('UNAUTHORISED', { scope: 'X-IBM-Client-Id' })), call)
    expect(client).toBeInstanceOf(BankUnauthorizedError)
    expect(client).not.toBeInstanceOf(BankConsentRevokedError)
    expect((client as BankUnauthorizedError).code).toBe('BANK_CLIENT_REJECTED')
  })

  it('maps 403, 404, 400 and 5xx with the bank codes and the request id in the message', () => {
    expect(toBankError(status(403, cobs('AG01')), call)).toBeInstanceOf(BankForbiddenError)
    expect(toBankError(status(404, cobs('ID_NOT_FOUND')), call)).toBeInstanceOf(BankNotFoundError)
    const rejected = toBankError(
      status(400, {
        errors: [
          { error: 'AC09', scope: 'debtorAccount.currency', parameters: { CURRENCY_ALLOWED: 'CZK' } },
          { error: 'RR10' },
        ],
      }),
      call,
    )
    expect(rejected).toBeInstanceOf(BankRequestRejectedError)
    expect((rejected as BankRequestRejectedError).bankCodes).toEqual(['AC09', 'RR10'])
    expect((rejected as Error).message).toMatch(/AC09 \(debtorAccount.currency\); RR10 .*X-Request-ID rid-1/)
    const down = toBankError(status(503, cobs('NARR'), true), call)
    expect(down).toBeInstanceOf(BankUnavailableError)
    expect((down as BankUnavailableError).retriable).toBe(true)
    expect((toBankError(status(501, cobs('NOT_IMPLEMENTED')), call) as BankUnavailableError).retriable).toBe(
      false,
    )
  })

  it('maps NO_PART to InstantPaymentRefusedError only for instant payments', () => {
    const body = cobs('NO_PART', {
      scope: 'paymentTypeInformation.instructionPriority',
      parameters: { REASON: 'CREDITOR_BANK_NOT_REACHABLE' },
    })
    const refused = toBankError(status(400, body), { ...call, instant: true })
    expect(refused).toBeInstanceOf(InstantPaymentRefusedError)
    expect((refused as InstantPaymentRefusedError).code).toBe('INSTANT_PAYMENT_REFUSED')
    expect(toBankError(status(400, body), call)).not.toBeInstanceOf(InstantPaymentRefusedError)
  })

  it('keeps Retry-After on throttling and passes caller aborts through', () => {
    const t = new ThrottledError(ctx, { bodySnippet: '', bodyText: '', headers: {}, retryAfterMs: 2000 })
    const mapped = toBankError(t, call)
    expect(mapped).toBeInstanceOf(BankThrottledError)
    expect(mapped).toMatchObject({ retryAfterMs: 2000, retriable: true, code: 'BANK_THROTTLED' })
    const abort = new HttpAbortedError(ctx, new Error('stop'))
    expect(toBankError(abort, call)).toBe(abort)
    const net = new HttpNetworkError(ctx, {
      cause: new Error('x'),
      networkCode: 'ECONNRESET',
      beforeSend: false,
    })
    expect(toBankError(net, call)).toMatchObject({
      code: 'BANK_UNAVAILABLE',
      retriable: true,
      requestId: 'rid-1',
    })
  })
})

describe('toBankTokenError', () => {
  const tokenCall = { ...call, operation: 'bank.oauth.refresh' }
  it('treats a refused refresh token as a dead consent (400 or 401)', () => {
    for (const code of [400, 401]) {
      const err = toBankTokenError(
        status(code, { error: 'invalid_grant', error_description: 'refresh token expired' }),
        { ...tokenCall, grant: 'refresh_token' },
      )
      expect(err).toBeInstanceOf(BankConsentRevokedError)
    }
  })
  it('treats a refused code or client as an OAuth error with a hint', () => {
    const code = toBankTokenError(status(401, { error: 'invalid_grant' }), {
      ...tokenCall,
      grant: 'authorization_code',
    })
    expect(code).toBeInstanceOf(BankOAuthError)
    expect((code as Error).message).toMatch(/authorization code is unknown, used, expired/)
    const client = toBankTokenError(status(401, { error: 'invalid_client' }), {
      ...tokenCall,
      grant: 'refresh_token',
    })
    expect(client).toMatchObject({ code: 'BANK_CLIENT_REJECTED', oauthError: 'invalid_client' })
  })
})

describe('error bodies', () => {
  it('parses COBS bodies leniently and ignores junk', () => {
    expect(parseCobsErrors('{"errors":{"error":"X","scope":null,"parameters":null}}')).toEqual([
      { error: 'X', scope: undefined, parameters: undefined, message: undefined },
    ])
    expect(parseCobsErrors('<html>')).toEqual([])
    expect(
      parseCobsErrors('{"errors":[{"scope":"x"},7,{"error":"Y","parameters":{"A":"1"},"message":"m"}]}'),
    ).toEqual([{ error: 'Y', scope: undefined, parameters: { A: '1' }, message: 'm' }])
    expect(parseOAuthError('{"error":"invalid_grant","error_description":"gone"}')).toEqual({
      error: 'invalid_grant',
      error_description: 'gone',
    })
    expect(parseOAuthError('{"errors":[]}')).toBeUndefined()
  })
})
