import { context, SpanKind, SpanStatusCode, trace, type Link, type Span, type Tracer } from '@opentelemetry/api'
import { errorCode } from '@tep/errors'
import { installedTracer } from '@tep/kafka'

/**
 * One micro-batched findBy call serves records of many traces. Its span
 * (`findBy batch`, the HTTP call's parent) is a child of the record that
 * opened the batch, as the active context has it, and links to the `process`
 * span of every record in it; each of those gets a link back, so every
 * record's trace leads to the call that answered it.
 */
export class LookupTracing<I extends object> {
  readonly #tracer: Tracer
  /** The span each input's record was being processed in when it was queued. */
  readonly #callers = new WeakMap<I, Span>()

  constructor(tracer: Tracer) {
    this.#tracer = tracer
  }

  /** Remembers the active span of the record that queues `input`. */
  note(input: I): void {
    const span = trace.getActiveSpan()
    if (span !== undefined) this.#callers.set(input, span)
  }

  async batch<T>(inputs: readonly I[], run: () => Promise<T>): Promise<T> {
    const callers: Span[] = []
    const links: Link[] = []
    for (const input of inputs) {
      const caller = this.#callers.get(input)
      if (caller === undefined) continue
      callers.push(caller)
      links.push({ context: caller.spanContext() })
    }
    const span = this.#tracer.startSpan('findBy batch', {
      kind: SpanKind.INTERNAL,
      links,
      attributes: { 'tep.lookup.batch_size': inputs.length },
    })
    for (const caller of callers) caller.addLink({ context: span.spanContext() })
    try {
      return await context.with(trace.setSpan(context.active(), span), run)
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode(error) })
      throw error
    } finally {
      span.end()
    }
  }
}

/** Undefined without a tracer provider: then the lookups do no tracing work. */
export function lookupTracing<I extends object>(): LookupTracing<I> | undefined {
  const tracer = installedTracer('@tep/transaction-ingest')
  return tracer === undefined ? undefined : new LookupTracing<I>(tracer)
}
