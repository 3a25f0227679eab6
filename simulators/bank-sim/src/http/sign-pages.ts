import type { FastifyInstance, FastifyReply } from 'fastify'
import type { SimContext } from '../sim-context.ts'
import { appendQuery, type SignSession } from '../payments/signing.ts'
import { errorBox, escapeHtml, loginFields, page } from './html.ts'

function first(value: unknown): string | undefined {
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined
  return typeof value === 'string' ? value : undefined
}

function describe(ctx: SimContext, session: SignSession): string | undefined {
  if (session.target.type === 'payment') {
    const p = ctx.payments.byId(session.target.id)
    if (!p || p.signState !== 'OPEN') return undefined
    const to = p.creditor.iban ?? (p.creditor.czech ? `${p.creditor.czech.prefix ? `${p.creditor.czech.prefix}-` : ''}${p.creditor.czech.number}/${p.creditor.czech.bankCode}` : '(foreign account)')
    return `<h1>Authorize payment</h1>
<table>
<tr><td>Amount</td><td><strong>${(p.amountMinor / 100).toFixed(2)} ${escapeHtml(p.currency)}</strong></td></tr>
<tr><td>To</td><td>${escapeHtml(p.creditorName ?? '')} ${escapeHtml(to)}</td></tr>
<tr><td>Kind</td><td>${escapeHtml(p.kind)} ${escapeHtml(p.priority)}</td></tr>
<tr><td>Date</td><td>${escapeHtml(p.executionDate)}</td></tr>
</table>`
  }
  const o = ctx.standingOrders.byId(session.target.id)
  const s = o?.signing
  if (!o || !s || s.state !== 'OPEN' || s.signId !== session.signId) return undefined
  const detail = ctx.standingOrders.renderDetail(o) as { amount: { instructedAmount: { value: number; currency: string } } }
  const what = s.kind === 'CREATE' ? 'new standing order' : s.kind === 'UPDATE' ? 'change of standing order' : 'deletion of standing order'
  const terms = s.pendingTerms
  const amount = terms ? `${(terms.amountMinor / 100).toFixed(2)} ${terms.currency}` : `${detail.amount.instructedAmount.value.toFixed(2)} ${detail.amount.instructedAmount.currency}`
  return `<h1>Authorize ${escapeHtml(what)}</h1>
<table><tr><td>Standing order</td><td>${escapeHtml(o.id)}</td></tr><tr><td>Amount</td><td><strong>${escapeHtml(amount)}</strong></td></tr></table>`
}

/**
 * The page behind `href.url` of the sign operations: the user logs in and
 * authorizes, or cancels; the browser then returns to the application's return URL
 * with `paymentId` (or `standingOrderId`) appended.
 */
export function registerSignPages(app: FastifyInstance, ctx: SimContext): void {
  const render = (reply: FastifyReply, session: SignSession, status: number, error?: string): FastifyReply => {
    const summary = describe(ctx, session)
    if (!summary) return reply.code(400).type('text/html; charset=utf-8').send(page('Authorization', `<h1>Nothing to authorize</h1>${errorBox('This authorization is already finished.')}`))
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(
        page(
          'Authorize',
          `${summary}${errorBox(error)}
<form method="post" action="/sign/${escapeHtml(session.id)}">
${loginFields()}
<button type="submit" name="decision" value="authorize">Authorize</button>
<button type="submit" name="decision" value="cancel">Cancel</button>
</form>`,
        ),
      )
  }

  const unknown = (reply: FastifyReply): FastifyReply =>
    reply.code(404).type('text/html; charset=utf-8').send(page('Authorization', `<h1>Link not valid</h1>${errorBox('This authorization link is unknown, was replaced by a newer one, or has expired.')}`))

  app.get('/sign/:sessionId', async (req, reply) => {
    const session = ctx.signing.get((req.params as { sessionId: string }).sessionId)
    if (!session) return unknown(reply)
    ctx.payments.settleDue()
    return render(reply, session, 200)
  })

  app.post('/sign/:sessionId', async (req, reply) => {
    const session = ctx.signing.get((req.params as { sessionId: string }).sessionId)
    if (!session) return unknown(reply)
    if (!describe(ctx, session)) return render(reply, session, 400)
    const form = (req.body ?? {}) as Record<string, unknown>
    const decision = first(form.decision)
    if (decision !== 'authorize' && decision !== 'cancel') return render(reply, session, 400, 'Choose Authorize or Cancel.')
    if (decision === 'authorize') {
      const user = ctx.bank.login(first(form.username) ?? '', first(form.password) ?? '')
      if (!user || user.id !== session.userId) return render(reply, session, 401, 'Wrong username or password.')
    }
    const { target } = session
    if (target.type === 'payment') {
      const p = ctx.payments.byId(target.id)
      if (p && decision === 'authorize') ctx.payments.authorize(p)
      else if (p) ctx.payments.cancel(p)
    } else {
      const o = ctx.standingOrders.byId(target.id)
      if (o && decision === 'authorize') ctx.standingOrders.authorize(o)
      else if (o) ctx.standingOrders.cancel(o)
    }
    ctx.signing.close(session.id)
    const param: Record<string, string> = target.type === 'payment' ? { paymentId: target.id } : { standingOrderId: target.id }
    return reply.code(302).header('location', appendQuery(session.returnUrl, param)).header('cache-control', 'no-store').send()
  })
}
