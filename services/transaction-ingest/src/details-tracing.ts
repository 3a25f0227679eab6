import { SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api'
import { errorCode } from '@tep/errors'
import type { ResolvedDetails } from './merchant-details.ts'

function close(span: Span, details: ResolvedDetails): ResolvedDetails {
  span.setAttribute('tep.shop.source', details.shopSource ?? 'NONE')
  span.setAttribute('tep.merchant.source', details.merchantSource ?? 'NONE')
  span.end()
  return details
}

function fail(span: Span, error: unknown): never {
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode(error) })
  span.setAttribute('error.type', errorCode(error))
  span.end()
  throw error
}

/**
 * The shop and merchant of a match read from the local tables (the API on a
 * miss: its getShop/getMerchant calls are this span's children), as one span
 * per record. A table hit stays synchronous: no promise is made for it.
 */
export function tracedDetails(
  tracer: Tracer,
  shopUid: string,
  resolve: () => ResolvedDetails | Promise<ResolvedDetails>,
): ResolvedDetails | Promise<ResolvedDetails> {
  return tracer.startActiveSpan('read merchant tables', { attributes: { 'tep.shop.uid': shopUid } }, (span) => {
    let resolving: ResolvedDetails | Promise<ResolvedDetails>
    try {
      resolving = resolve()
    } catch (error) {
      return fail(span, error)
    }
    if (!(resolving instanceof Promise)) return close(span, resolving)
    return resolving.then(
      (details) => close(span, details),
      (error: unknown) => fail(span, error),
    )
  })
}
