import {
  BankAuthorizationCallbackError,
  BankOAuthError,
  BankProtocolError,
  BankConsentRevokedError,
} from '@tep/bank-client'
import { errorCode } from '@tep/errors'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AuthorizationStateClaims } from './authorization-state.ts'
import { clearCookie, cookieName, matches, readCookie } from './browser-binding.ts'
import { CallbackBudgetExceededError } from './callback-budget.ts'
import type { ConsentGatewayOptions } from './gateway-options.ts'
import { publicConsent } from './consent-view.ts'
import type { CustomerLimit } from './customer-limit.ts'
import { ConsentStateError } from './errors.ts'
import { escapeHtml, htmlPage, sendError, wantsHtml } from './gateway-pages.ts'
import { grantedConsent } from './granted-consent.ts'
import { writeConsent } from './consent-write.ts'

/** What the callback shares with the rest of the gateway. */
export interface CallbackContext {
  count: (route: string, outcome: string) => void
  pkce: boolean
  perCustomer: CustomerLimit
}

/**
 * GET /consents/callback: the bank's redirect back to the gateway. Checks the
 * signed state and the browser that started the flow, exchanges the code once
 * (never twice: a replayed code revokes the grant at the bank), records the
 * consent with its tokens sealed, and revokes the grant when it cannot be
 * recorded (nothing would ever use or end it).
 */
export function registerCallbackRoute(app: FastifyInstance, o: ConsentGatewayOptions, ctx: CallbackContext): void {
  const { count, pkce, perCustomer } = ctx
  app.get('/consents/callback', async (req, reply) => {
    const q = req.query as Record<string, unknown>
    const state = typeof q.state === 'string' ? q.state : ''
    if (state === '') {
      count('callback', 'no_state')
      return sendError(req, reply, {
        status: 400,
        code: 'CONSENT_STATE_MISSING',
        message: 'the callback carries no state; open the consent link from the application again',
      })
    }
    let claims: AuthorizationStateClaims
    try {
      claims = o.signer.verify(state)
    } catch (err) {
      if (!(err instanceof ConsentStateError)) throw err
      count('callback', `state_${err.problem.toLowerCase()}`)
      return sendError(req, reply, { status: 400, code: err.code, message: err.message })
    }
    // The browser that started the flow holds the secret whose hash the state names.
    const secret = readCookie(req.headers.cookie, cookieName(claims.consentId, o.secure))
    if (!matches(secret, claims.binding)) {
      count('callback', 'other_browser')
      o.logger.warn({ consentId: claims.consentId }, 'consent callback from a browser that did not start it')
      return sendError(req, reply, {
        status: 403,
        code: 'CONSENT_BROWSER_MISMATCH',
        message:
          'this consent was started in another browser (or its cookie was lost); nothing was recorded. Start the consent again from the bank application in this browser',
      })
    }
    // Each callback costs a code exchange: the customer the signed state names pays for it.
    perCustomer.take('callback', claims.customerId)
    try {
      o.signer.begin(state)
    } catch (err) {
      if (!(err instanceof ConsentStateError)) throw err
      count('callback', `state_${err.problem.toLowerCase()}`)
      return sendError(req, reply, { status: 400, code: err.code, message: err.message })
    }
    // Already recorded, here or by another replica (the view reads the whole consents topic):
    // the browser came back twice (reload, back button, a retry routed to another replica).
    // Never exchange the code a second time: a bank that sees an authorization code replayed
    // revokes every token issued for it (RFC 6749 §4.1.2), which would end the consent just
    // recorded. A second callback racing the first within the view's lag is not caught here.
    const recorded = o.view.get(claims.consentId)
    if (recorded !== undefined && recorded.customerId === claims.customerId) {
      o.signer.complete(claims)
      count('callback', 'already_recorded')
      void reply.header('set-cookie', clearCookie(claims.consentId, { secure: o.secure }))
      const message = `consent ${claims.consentId} is already recorded (${recorded.status}); nothing was done again`
      if (wantsHtml(req))
        return reply
          .code(409)
          .type('text/html; charset=utf-8')
          .send(htmlPage('Already connected', `<p>${escapeHtml(message)}</p>`))
      return reply.code(409).send({ error: 'CONSENT_ALREADY_RECORDED', message, consent: publicConsent(recorded) })
    }
    try {
      return await finishCallback(req, reply, claims, secret as string, state)
    } finally {
      // Whatever did not complete may be retried with the same callback URL.
      o.signer.release(claims)
    }
  })

  const finishCallback = async (
    req: FastifyRequest,
    reply: FastifyReply,
    claims: AuthorizationStateClaims,
    secret: string,
    state: string,
  ): Promise<FastifyReply> => {
    let code: string
    try {
      ;({ code } = o.bank.authorization.parseCallback(new URL(req.url, 'http://gateway.invalid'), state))
    } catch (err) {
      if (!(err instanceof BankAuthorizationCallbackError)) throw err
      if (err.code === 'AUTHORIZATION_DENIED') {
        o.signer.complete(claims)
        count('callback', 'denied')
        return sendError(req, reply, {
          status: 403,
          code: 'CONSENT_DENIED',
          message: 'access to the bank accounts was declined at the bank; nothing was recorded',
        })
      }
      count('callback', 'bank_error')
      return sendError(req, reply, { status: 502, code: err.code, message: err.message })
    }
    let tokens
    try {
      tokens = await o.callbackBudget.run(() =>
        o.bank.authorization.exchangeCode(code, { scope: 'AISP', ...(pkce ? { codeVerifier: secret } : {}) }),
      )
    } catch (err) {
      if (err instanceof CallbackBudgetExceededError) {
        count('callback', 'busy')
        void reply.header('retry-after', '5')
        return sendError(req, reply, { status: 503, code: err.code, message: err.message })
      }
      count('callback', 'exchange_failed')
      o.logger.warn(
        // `field`: what a token answer the client cannot use lacked (BANK_PROTOCOL_ERROR).
        { code: errorCode(err), consentId: claims.consentId, field: err instanceof BankProtocolError ? err.details.field : undefined },
        'authorization code exchange failed',
      )
      const refused = err instanceof BankOAuthError || err instanceof BankConsentRevokedError
      // A refused code stays refused; an unreachable bank may answer a retry of this callback.
      if (refused) o.signer.complete(claims)
      return sendError(req, reply, {
        status: refused ? 400 : 502,
        code: refused ? 'AUTHORIZATION_CODE_REFUSED' : 'BANK_UNAVAILABLE',
        message: refused
          ? 'the bank refused the authorization code (expired or already used); start the consent again'
          : 'the bank could not be reached to complete the consent; try again in a moment',
      })
    }
    const consent = grantedConsent(tokens, claims, o.cipher, o.now())
    try {
      await writeConsent(o, consent)
    } catch (err) {
      // Nothing records the grant, so nothing would ever use or end it: revoke it.
      o.signer.complete(claims)
      await revokeGrant(code, secret, claims.consentId)
      throw err
    }
    o.signer.complete(claims)
    void reply.header('set-cookie', clearCookie(claims.consentId, { secure: o.secure }))
    count('callback', 'granted')
    o.logger.info(
      { consentId: consent.consentId, customerId: consent.customerId },
      'consent granted and recorded',
    )
    if (wantsHtml(req)) {
      return reply
        .code(201)
        .type('text/html; charset=utf-8')
        .send(
          htmlPage(
            'Bank accounts connected',
            `<p>Consent <code>${escapeHtml(consent.consentId)}</code> is active; transactions will appear shortly.</p>`,
          ),
        )
    }
    return reply.code(201).send(publicConsent(consent))
  }

  /**
   * The bank API has no revocation endpoint. RFC 6749 §4.1.2 has the bank revoke the
   * tokens issued from a code used twice, and the bank spec says it does (ASSUMPTION
   * in schemas/openapi/bank-open-banking.yaml, implemented by the simulator): the code
   * is exchanged once more and the bank's refusal is the revocation.
   */
  const revokeGrant = async (code: string, verifier: string, consentId: string): Promise<void> => {
    try {
      // The same request as the first exchange, so nothing but the reuse can refuse it.
      await o.callbackBudget.run(() =>
        o.bank.authorization.exchangeCode(code, { scope: 'AISP', ...(pkce ? { codeVerifier: verifier } : {}) }),
      )
      o.logger.error({ consentId }, 'consent not recorded, and replaying its code did not revoke the bank grant: it stays live at the bank until it expires')
    } catch (err) {
      const revoked = err instanceof BankOAuthError || err instanceof BankConsentRevokedError
      if (revoked) o.logger.warn({ consentId }, 'consent not recorded; its bank grant was revoked (authorization code replayed)')
      else o.logger.error({ consentId, code: errorCode(err) }, 'consent not recorded, and its bank grant could not be revoked: it stays live at the bank until it expires')
    }
    count('callback', 'not_recorded')
  }
}
