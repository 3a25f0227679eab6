import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Link, type Span, type SpanContext, type Tracer } from '@opentelemetry/api'
import { errorCode } from '@tep/errors'
import type { OutputRecord, PipelineRecord, Transform, TransformContext, TransformResult } from '../pipeline-types.ts'
import { extractRecordContext, installedTracer, KAFKA_TRACER, MESSAGING, withTraceContext } from '../trace-context.ts'
import type { Taken } from './partition-state.ts'
import { isPromiseLike } from './transform-runner.ts'

function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode(error) })
  if (error instanceof Error) span.recordException(error)
  span.setAttribute('error.type', errorCode(error))
}

/**
 * The spans of the exactly-once loop, made only when a tracer provider is
 * installed (pipelineTracing answers undefined otherwise, and the loop then
 * runs its plain transform and commit: no span, no header read, no context switch).
 *
 * Per record, a `process <topic>` consumer span whose parent is the trace
 * context the record carries, so each event's trace goes on through this
 * service; the transform runs with it active (the findBy call, the table reads
 * are its children). Per output, a `create <topic>` producer span, child of
 * that, whose context is written into the output's headers for the next
 * consumer. Per transaction, a `commit` span with a link to every output's
 * creation (and every dead-lettered record's processing), carrying the
 * transactional id: one transaction holds records of many traces, so it
 * belongs to none of them (the messaging conventions' batch rule).
 */
export class PipelineTracing {
  readonly #tracer: Tracer
  readonly #groupId: string
  readonly #transactionalId: string
  /** Each output's creation span context, for the transaction's links. */
  readonly #created = new WeakMap<OutputRecord, SpanContext>()
  /** Each record's processing span context, for the links of the dead-lettered. */
  readonly #processed = new WeakMap<PipelineRecord, SpanContext>()

  constructor(tracer: Tracer, groupId: string, transactionalId: string) {
    this.#tracer = tracer
    this.#groupId = groupId
    this.#transactionalId = transactionalId
  }

  /** The transform, each call inside its record's `process` span. */
  wrap(transform: Transform): Transform {
    return (record: PipelineRecord, ctx: TransformContext) => {
      const parent = extractRecordContext(record.headers)
      const span = this.#tracer.startSpan(
        `process ${record.topic}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            [MESSAGING.system]: 'kafka',
            [MESSAGING.operationName]: 'process',
            [MESSAGING.operationType]: 'process',
            [MESSAGING.destination]: record.topic,
            [MESSAGING.partition]: String(record.partition),
            [MESSAGING.offset]: Number(record.offset),
            [MESSAGING.consumerGroup]: this.#groupId,
            'tep.attempt': ctx.attempt,
          },
        },
        parent,
      )
      this.#processed.set(record, span.spanContext())
      const active = trace.setSpan(parent, span)
      let result: TransformResult | Promise<TransformResult>
      try {
        result = context.with(active, transform, undefined, record, ctx)
      } catch (error) {
        failed(span, error)
        span.end()
        throw error
      }
      if (!isPromiseLike(result)) return this.#finish(span, active, result)
      return Promise.resolve(result).then(
        (value) => this.#finish(span, active, value),
        (error: unknown) => {
          failed(span, error)
          span.end()
          throw error
        },
      )
    }
  }

  #finish(span: Span, active: Context, result: TransformResult): TransformResult {
    const outputs = result === undefined ? [] : Array.isArray(result) ? result : [result]
    for (const output of outputs) {
      const create = this.#tracer.startSpan(
        `create ${output.topic}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            [MESSAGING.system]: 'kafka',
            [MESSAGING.operationName]: 'create',
            [MESSAGING.operationType]: 'create',
            [MESSAGING.destination]: output.topic,
          },
        },
        active,
      )
      output.headers = withTraceContext(output.headers, trace.setSpan(active, create))
      this.#created.set(output, create.spanContext())
      create.end()
    }
    span.end()
    return result
  }

  /** Runs one transaction's commit inside its `commit` span. */
  async commit(live: readonly Taken[], outputs: number, run: () => Promise<void>): Promise<void> {
    const links: Link[] = []
    let records = 0
    for (const t of live) {
      records += t.done.length
      for (const { outcome } of t.done) {
        if (outcome.kind === 'outputs') {
          for (const out of outcome.outputs) {
            const created = this.#created.get(out)
            if (created !== undefined) links.push({ context: created })
          }
        } else {
          const processed = this.#processed.get(outcome.record)
          if (processed !== undefined) links.push({ context: processed, attributes: { 'tep.dead_lettered': true } })
        }
      }
    }
    const span = this.#tracer.startSpan(
      'commit',
      {
        kind: SpanKind.CLIENT,
        links,
        attributes: {
          [MESSAGING.system]: 'kafka',
          [MESSAGING.operationName]: 'commit',
          [MESSAGING.operationType]: 'settle',
          [MESSAGING.consumerGroup]: this.#groupId,
          [MESSAGING.batchCount]: records,
          [MESSAGING.transactionalId]: this.#transactionalId,
          'tep.kafka.outputs': outputs,
        },
      },
      ROOT_CONTEXT,
    )
    try {
      await context.with(trace.setSpan(ROOT_CONTEXT, span), run)
    } catch (error) {
      failed(span, error)
      throw error
    } finally {
      span.end()
    }
  }
}

/** The loop's tracing, or undefined when no tracer provider is installed (then nothing is traced). */
export function pipelineTracing(groupId: string, transactionalId: string): PipelineTracing | undefined {
  const tracer = installedTracer(KAFKA_TRACER)
  return tracer === undefined ? undefined : new PipelineTracing(tracer, groupId, transactionalId)
}
