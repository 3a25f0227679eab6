import { TracingConfigError } from './errors.ts'

/** The OTEL_* variables read (the OpenTelemetry SDK environment specification's names). */
export type TracingEnv = Readonly<Record<string, string | undefined>>

export type ExporterName = 'otlp' | 'console'

export type SamplerConfig =
  | { kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { kind: 'traceidratio' | 'parentbased_traceidratio'; ratio: number }

export interface TracingConfig {
  /** Empty: tracing is off (no provider is installed). */
  exporters: ExporterName[]
  serviceName: string
  resourceAttributes: Record<string, string>
  sampler: SamplerConfig
  /** Where OTLP/HTTP protobuf spans go. */
  otlpUrl: string
  otlpHeaders: Record<string, string>
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const

const text = (env: TracingEnv, name: string): string | undefined => {
  const v = env[name]?.trim()
  return v === undefined || v === '' ? undefined : v
}

/** `key1=value1,key2=value2`, values percent-encoded (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS). */
function keyValues(env: TracingEnv, name: string): Record<string, string> {
  const out: Record<string, string> = {}
  const raw = text(env, name)
  if (raw === undefined) return out
  for (const pair of raw.split(',')) {
    const at = pair.indexOf('=')
    if (at <= 0) throw new TracingConfigError(name, `expected key=value pairs separated by commas, got ${JSON.stringify(pair.trim())}`)
    try {
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      throw new TracingConfigError(name, `a key or value is not valid percent-encoding: ${JSON.stringify(pair.slice(0, at).trim())}`)
    }
  }
  return out
}

function exportersOf(env: TracingEnv): ExporterName[] {
  if (text(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return []
  // The specification's default is `otlp`; this project's is off, so that nothing is sent anywhere unless asked.
  const names = (text(env, 'OTEL_TRACES_EXPORTER') ?? 'none').split(',').map((n) => n.trim().toLowerCase())
  const out: ExporterName[] = []
  for (const name of names) {
    if (name === 'none') return []
    if (name !== 'otlp' && name !== 'console')
      throw new TracingConfigError('OTEL_TRACES_EXPORTER', `expected otlp, console or none (comma-separated), got ${JSON.stringify(name)}`)
    if (!out.includes(name)) out.push(name)
  }
  return out
}

function samplerOf(env: TracingEnv): SamplerConfig {
  const name = (text(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase()
  if (!(SAMPLERS as readonly string[]).includes(name))
    throw new TracingConfigError('OTEL_TRACES_SAMPLER', `expected one of ${SAMPLERS.join(', ')}, got ${JSON.stringify(name)}`)
  const kind = name as (typeof SAMPLERS)[number]
  if (kind !== 'traceidratio' && kind !== 'parentbased_traceidratio') return { kind }
  const arg = text(env, 'OTEL_TRACES_SAMPLER_ARG')
  const ratio = arg === undefined ? 1 : Number(arg)
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new TracingConfigError('OTEL_TRACES_SAMPLER_ARG', `expected a ratio from 0 to 1 for ${kind}, got ${JSON.stringify(arg)}`)
  return { kind, ratio }
}

function otlpUrlOf(env: TracingEnv): string {
  const signal = text(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
  const base = text(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')
  // The signal-specific endpoint is used as it is; the base one gets the signal's path (the specification's rule).
  const url = signal ?? `${(base ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`
  const variable = signal !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new TracingConfigError(variable, `expected an http:// or https:// URL, got ${JSON.stringify(url)}`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new TracingConfigError(variable, `expected an http:// or https:// URL, got ${JSON.stringify(url)}`)
  return url
}

/**
 * The tracing set-up the OTEL_* variables ask for. Throws TracingConfigError
 * for a value it does not understand (a typo must not silently turn tracing off).
 */
export function readTracingConfig(env: TracingEnv, defaultServiceName: string): TracingConfig {
  const exporters = exportersOf(env)
  const protocolVariable = text(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL'
  const protocol = text(env, protocolVariable)
  if (exporters.includes('otlp') && protocol !== undefined && protocol !== 'http/protobuf')
    throw new TracingConfigError(protocolVariable, `only http/protobuf is supported, got ${JSON.stringify(protocol)}`)
  const resourceAttributes = keyValues(env, 'OTEL_RESOURCE_ATTRIBUTES')
  return {
    exporters,
    serviceName: text(env, 'OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? defaultServiceName,
    resourceAttributes,
    sampler: samplerOf(env),
    otlpUrl: otlpUrlOf(env),
    otlpHeaders: { ...keyValues(env, 'OTEL_EXPORTER_OTLP_HEADERS'), ...keyValues(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
  }
}
