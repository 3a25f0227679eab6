import { context, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api'
import { errorCode } from '@tep/errors'
import { MESSAGING, RECORD_HEADERS_GETTER, withTraceContext } from '../trace-context.ts'
import type { OutgoingMessage } from './send-plan.ts'

function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode(error) })
  span.setAttribute('error.type', errorCode(error))
}

/**
 * One transaction of a transactional writer (a bank page, a page of
 * invalidations) as a `send` producer span, child of whatever is active (a
 * new trace when nothing is), with a `commit` child around EndTxn. Every
 * message written gets the `send` span's trace context in its headers, so the
 * consumers of the page's records (the ingest, the refresher) continue its trace;
 * a message that already carries a `traceparent` keeps it.
 */
export class WriterTransactionTrace {
  readonly #tracer: Tracer
  readonly #span: Span
  readonly #context: Context
  readonly #transactionalId: string
  #messages = 0

  constructor(tracer: Tracer, transactionalId: string) {
    this.#tracer = tracer
    this.#transactionalId = transactionalId
    this.#span = tracer.startSpan('send', {
      kind: SpanKind.PRODUCER,
      attributes: {
        [MESSAGING.system]: 'kafka',
        [MESSAGING.operationName]: 'send',
        [MESSAGING.operationType]: 'send',
        [MESSAGING.transactionalId]: transactionalId,
      },
    })
    this.#context = trace.setSpan(context.active(), this.#span)
  }

  /** The messages, each with the transaction's trace context in its headers. */
  traced(messages: readonly OutgoingMessage[]): OutgoingMessage[] {
    this.#messages += messages.length
    return messages.map((m) =>
      m.headers !== undefined && RECORD_HEADERS_GETTER.get(m.headers, 'traceparent') !== undefined
        ? m
        : { ...m, headers: withTraceContext(m.headers, this.#context) as Record<string, Buffer | string> },
    )
  }

  /** EndTxn inside a `commit` span. */
  async commit(run: () => Promise<void>): Promise<void> {
    const span = this.#tracer.startSpan(
      'commit',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [MESSAGING.system]: 'kafka',
          [MESSAGING.operationName]: 'commit',
          [MESSAGING.operationType]: 'settle',
          [MESSAGING.transactionalId]: this.#transactionalId,
        },
      },
      this.#context,
    )
    try {
      await run()
    } catch (error) {
      failed(span, error)
      throw error
    } finally {
      span.end()
    }
  }

  end(error?: unknown): void {
    this.#span.setAttribute(MESSAGING.batchCount, this.#messages)
    if (error !== undefined) failed(this.#span, error)
    this.#span.end()
  }
}
