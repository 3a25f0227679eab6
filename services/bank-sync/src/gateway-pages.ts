import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Headers of every gateway answer: its pages embed nothing and are embedded
 * nowhere (clickjacking of the consent flow), leak no URL (the callback URL holds
 * the code and state) and are never cached.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

export interface ApiError {
  status: number
  code: string
  message: string
}

export function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? ''
  return accept.includes('text/html')
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

export function sendError(req: FastifyRequest, reply: FastifyReply, e: ApiError): FastifyReply {
  if (wantsHtml(req)) {
    return reply
      .code(e.status)
      .type('text/html; charset=utf-8')
      .send(htmlPage('The bank consent was not recorded', `<p>${escapeHtml(e.message)}</p><p><small>${escapeHtml(e.code)}</small></p>`))
  }
  return reply.code(e.status).send({ error: e.code, message: e.message })
}

/** A small HTML page of the gateway (the browser's end of the consent flow). */
export function htmlPage(heading: string, bodyHtml: string): string {
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>Bank consent</title></head><body>` +
    `<h1>${heading}</h1>${bodyHtml}</body></html>`
  )
}
