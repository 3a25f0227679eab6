import {
  context,
  propagation,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api'
import { errorCode } from '@tep/errors'
import type { HttpResponse } from '@tep/http'

export const ENRICHMENT_TRACER = '@tep/enrichment-client'

/** The installed provider's tracer, or undefined (no provider: the client does no tracing work at all). */
export function enrichmentTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider()
  if (provider instanceof ProxyTracerProvider) return provider.getDelegateTracer(ENRICHMENT_TRACER)
  return provider.getTracer(ENRICHMENT_TRACER)
}

const statusOf = (err: unknown): number | undefined => {
  const status = (err as { status?: unknown } | undefined)?.status
  return typeof status === 'number' ? status : undefined
}

/**
 * One API call (retries and a token renewal included) as an HTTP client span,
 * child of the active context (the record's `process` span in the ingest), its
 * W3C trace context sent as `traceparent` / `tracestate` so that the API can
 * continue the trace. The URL is recorded without its query: a lookup's query
 * holds transaction data.
 */
export async function tracedCall(
  tracer: Tracer,
  call: { operation: string; method: string; url: URL },
  send: (traceHeaders: Record<string, string>) => Promise<HttpResponse>,
): Promise<HttpResponse> {
  const span = tracer.startSpan(`${call.method} ${call.operation}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': call.method,
      'server.address': call.url.hostname,
      'server.port': Number(call.url.port || (call.url.protocol === 'https:' ? 443 : 80)),
      'url.full': `${call.url.origin}${call.url.pathname}`,
      'tep.enrichment.operation': call.operation,
    },
  })
  const active = trace.setSpan(context.active(), span)
  const headers: Record<string, string> = {}
  propagation.inject(active, headers)
  try {
    const res = await context.with(active, send, undefined, headers)
    span.setAttribute('http.response.status_code', res.status)
    if (res.attempts > 1) span.setAttribute('http.request.resend_count', res.attempts - 1)
    return res
  } catch (err) {
    const status = statusOf(err)
    if (status !== undefined) span.setAttribute('http.response.status_code', status)
    span.setAttribute('error.type', status === undefined ? errorCode(err) : String(status))
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode(err) })
    throw err
  } finally {
    span.end()
  }
}
