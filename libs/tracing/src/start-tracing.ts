import { context, propagation, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace'
import { TracingConfigError } from './errors.ts'
import { readTracingConfig, type SamplerConfig, type TracingConfig, type TracingEnv } from './tracing-config.ts'

export interface StartTracingOptions {
  /** service.name unless OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise. */
  serviceName: string
  /**
   * Exporters used instead of those OTEL_TRACES_EXPORTER names, each behind a
   * SimpleSpanProcessor (tests: InMemorySpanExporter). Given, tracing is on
   * whatever OTEL_TRACES_EXPORTER says.
   */
  exporters?: SpanExporter[]
  /**
   * Told of an OTEL_* value this project does not understand instead of a thrown
   * TracingConfigError: a service's main passes its exit-2 configuration message,
   * as for every other variable.
   */
  onConfigProblem?: (variable: string, problem: string) => never
}

export interface Tracing {
  /** False: no provider was installed, and every library skips its tracing entirely. */
  readonly enabled: boolean
  readonly config: TracingConfig
  /** Exports what is buffered. */
  forceFlush(): Promise<void>
  /** Exports what is buffered and uninstalls the provider, propagator and context manager. */
  shutdown(): Promise<void>
}

function samplerFor(config: SamplerConfig): Sampler {
  switch (config.kind) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config.ratio)
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) })
  }
}

function processorsFor(config: TracingConfig, exporters: SpanExporter[] | undefined): SpanProcessor[] {
  if (exporters !== undefined) return exporters.map((exporter) => new SimpleSpanProcessor({ exporter }))
  return config.exporters.map((name) =>
    name === 'console'
      ? new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter() })
      : new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: config.otlpUrl, headers: config.otlpHeaders }) }),
  )
}

/** The configuration the variables give, or what onConfigProblem makes of a bad one. */
function readConfig(env: TracingEnv, options: StartTracingOptions): TracingConfig {
  try {
    return readTracingConfig(env, options.serviceName)
  } catch (err) {
    if (options.onConfigProblem === undefined || !(err instanceof TracingConfigError)) throw err
    return options.onConfigProblem(err.variable, err.problem)
  }
}

/**
 * Installs OpenTelemetry tracing as the OTEL_* variables in `env` ask, or
 * nothing at all when OTEL_TRACES_EXPORTER is unset or `none` (the default):
 * then the global tracer provider stays the API's no-op one, and the
 * libraries, which check for a provider when they are built, do no tracing
 * work whatsoever. Call it before building the Kafka pipeline and the clients.
 *
 * Installed: a tracer provider with the configured sampler, W3C trace context
 * (`traceparent`, `tracestate`) as the propagator, and an AsyncLocalStorage
 * context manager, so that a span started inside a record's transform is its child.
 */
export function startTracing(env: TracingEnv, options: StartTracingOptions): Tracing {
  const config = readConfig(env, options)
  const processors = processorsFor(config, options.exporters)
  if (processors.length === 0) {
    return { enabled: false, config, forceFlush: () => Promise.resolve(), shutdown: () => Promise.resolve() }
  }
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }),
    sampler: samplerFor(config.sampler),
    spanProcessors: processors,
  })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  trace.setGlobalTracerProvider(provider)
  let stopped: Promise<void> | undefined
  return {
    enabled: true,
    config,
    forceFlush: () => provider.forceFlush(),
    shutdown: () =>
      (stopped ??= (async () => {
        try {
          await provider.shutdown()
        } finally {
          trace.disable()
          propagation.disable()
          context.disable()
        }
      })()),
  }
}
