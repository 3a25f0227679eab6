import { describe, expect, it } from 'vitest'
import { TracingConfigError } from './errors.ts'
import { readTracingConfig } from './tracing-config.ts'

describe('readTracingConfig', () => {
  it('is off by default, unlike the specification (otlp): nothing is sent anywhere unless asked', () => {
    expect(readTracingConfig({}, 'svc').exporters).toEqual([])
    expect(readTracingConfig({ OTEL_TRACES_EXPORTER: 'none' }, 'svc').exporters).toEqual([])
    expect(readTracingConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, 'svc').exporters).toEqual([])
  })

  it('reads the exporters, the service name and the OTLP endpoint as the specification names them', () => {
    const c = readTracingConfig(
      {
        OTEL_TRACES_EXPORTER: 'otlp, console',
        OTEL_SERVICE_NAME: 'ingest-a',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod',
      },
      'transaction-ingest',
    )
    expect(c).toMatchObject({
      exporters: ['otlp', 'console'],
      serviceName: 'ingest-a',
      otlpUrl: 'http://collector:4318/v1/traces',
      otlpHeaders: { 'x-api-key': 'abc=' },
      resourceAttributes: { 'deployment.environment.name': 'prod' },
      sampler: { kind: 'parentbased_always_on' },
    })
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c/traces' }, 's').otlpUrl).toBe('https://c/traces')
    expect(readTracingConfig({}, 'transaction-ingest').serviceName).toBe('transaction-ingest')
  })

  it('reads the sampler and its ratio', () => {
    expect(readTracingConfig({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }, 's').sampler).toEqual({
      kind: 'parentbased_traceidratio',
      ratio: 0.01,
    })
    expect(readTracingConfig({ OTEL_TRACES_SAMPLER: 'traceidratio' }, 's').sampler).toEqual({ kind: 'traceidratio', ratio: 1 })
  })

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, 'OTEL_TRACES_EXPORTER'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'novalue' }, 'OTEL_RESOURCE_ATTRIBUTES'],
  ])('refuses %o naming %s (a typo must not silently turn tracing off)', (env, variable) => {
    const err = (() => {
      try {
        readTracingConfig(env, 's')
      } catch (e) {
        return e
      }
    })()
    expect(err).toBeInstanceOf(TracingConfigError)
    expect((err as TracingConfigError).variable).toBe(variable)
  })
})
