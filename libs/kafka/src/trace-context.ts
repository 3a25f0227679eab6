import {
  context,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  trace,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api'
import type { RecordHeaders } from './pipeline-types.ts'

/** The tracer name of this library's spans. */
export const KAFKA_TRACER = '@tep/kafka'

/**
 * The tracer of the installed provider, or undefined when none is installed
 * (@tep/tracing's startTracing with OTEL_TRACES_EXPORTER unset). Callers ask
 * once, when they are built, and skip every tracing step on undefined: the
 * API's no-op tracer would still make span objects, read headers and switch
 * contexts per record.
 */
export function installedTracer(name: string): Tracer | undefined {
  const provider = trace.getTracerProvider()
  // The API's global is a proxy; it has a delegate only once a provider is installed.
  if (provider instanceof ProxyTracerProvider) return provider.getDelegateTracer(name)
  return provider.getTracer(name)
}

const firstOf = (value: RecordHeaders[string]): string | undefined => {
  const v = Array.isArray(value) ? value[0] : value
  return v === undefined ? undefined : typeof v === 'string' ? v : v.toString('utf8')
}

/** Reads `traceparent` / `tracestate` from Kafka record headers (bytes or strings; the first of a repeated header). */
export const RECORD_HEADERS_GETTER: TextMapGetter<RecordHeaders> = {
  get: (carrier, key) => firstOf(carrier[key]),
  keys: (carrier) => Object.keys(carrier),
}

/** Writes `traceparent` / `tracestate` into Kafka record headers, replacing what was there. */
export const RECORD_HEADERS_SETTER: TextMapSetter<RecordHeaders> = {
  set: (carrier, key, value) => {
    carrier[key] = value
  },
}

/** The trace context a record carries (the root context when it carries none). */
export function extractRecordContext(headers: RecordHeaders, base: Context = ROOT_CONTEXT): Context {
  return propagation.extract(base, headers, RECORD_HEADERS_GETTER)
}

/**
 * Headers with `ctx`'s trace context written in (the active one by default):
 * a copy, so that headers shared between records are never changed.
 */
export function withTraceContext(headers: RecordHeaders | undefined, ctx: Context = context.active()): RecordHeaders {
  const out: RecordHeaders = { ...headers }
  propagation.inject(ctx, out, RECORD_HEADERS_SETTER)
  return out
}

/** Attribute names of the OpenTelemetry messaging semantic conventions used here. */
export const MESSAGING = {
  system: 'messaging.system',
  operationName: 'messaging.operation.name',
  operationType: 'messaging.operation.type',
  destination: 'messaging.destination.name',
  partition: 'messaging.destination.partition.id',
  consumerGroup: 'messaging.consumer.group.name',
  offset: 'messaging.kafka.offset',
  batchCount: 'messaging.batch.message_count',
  /** Not in the conventions (they have no attribute for it): this project's name. */
  transactionalId: 'tep.kafka.transactional_id',
} as const
