import { z } from 'zod'
import { envVar } from './env-spec.ts'
import { base64Key, brokerList, logLevel, nonEmpty, port, serviceUrl } from './parsers.ts'

// The shared variable names of ARCHITECTURE.md §5. Services compose the groups
// they need, so a name means the same thing in every service. Defaults point at
// the embedded local stack and simulators that `npm start` runs.

export const kafkaVars = {
  KAFKA_BROKERS: envVar(brokerList, 'comma-separated host:port list of Kafka brokers', { default: '127.0.0.1:9092' }),
  SCHEMA_REGISTRY_URL: envVar(serviceUrl(), 'Confluent-compatible schema registry base URL', {
    default: 'http://127.0.0.1:8081/apis/ccompat/v7',
  }),
}

export const observabilityVars = {
  LOG_LEVEL: envVar(logLevel, 'pino log level', { default: 'info' }),
  METRICS_PORT: envVar(port, 'port of /metrics, /healthz and /readyz (0 picks a free port)', { default: '9464' }),
}

export const enrichmentApiVars = {
  ENRICHMENT_API_URL: envVar(serviceUrl({ httpsUnlessLoopback: true }), 'enrichment API base URL, the part before /v5', {
    default: 'http://127.0.0.1:8181',
  }),
  ENRICHMENT_TOKEN_URL: envVar(serviceUrl({ httpsUnlessLoopback: true }), 'full OAuth token endpoint URL (default: {ENRICHMENT_API_URL}/auth/protocol/openid-connect/token)', {
    optional: true,
  }),
  ENRICHMENT_CLIENT_ID: envVar(nonEmpty, 'OAuth client id (client credentials flow)', { optional: true }),
  ENRICHMENT_CLIENT_SECRET: envVar(nonEmpty, 'OAuth client secret', { optional: true, secret: true }),
  ENRICHMENT_BASIC_USER: envVar(nonEmpty, 'HTTP Basic user (alternative to OAuth)', { optional: true }),
  ENRICHMENT_BASIC_PASSWORD: envVar(nonEmpty, 'HTTP Basic password', { optional: true, secret: true }),
}

export const bankApiVars = {
  BANK_API_URL: envVar(serviceUrl({ httpsUnlessLoopback: true }), 'bank open-banking API base URL', { default: 'http://127.0.0.1:8182' }),
  // No defaults: the simulator's values against a real bank would fail late and confusingly, and
  // a defaulted plain-http redirect URI turned the gateway's __Host- cookie, Secure and HSTS off.
  // The service supplies the simulator's values only behind its development switch.
  BANK_CLIENT_ID: envVar(nonEmpty, 'OAuth client id registered with the bank. Required unless BANK_SYNC_DEVELOPMENT_KEYS=true (then the loopback simulator\'s)', {
    optional: true,
  }),
  BANK_CLIENT_SECRET: envVar(nonEmpty, 'OAuth client secret registered with the bank. Required unless BANK_SYNC_DEVELOPMENT_KEYS=true (then the loopback simulator\'s)', {
    optional: true,
    secret: true,
  }),
  BANK_REDIRECT_URI: envVar(
    serviceUrl({ httpsUnlessLoopback: true }),
    'redirect URI registered with the bank (the consent gateway callback). Required unless BANK_SYNC_DEVELOPMENT_KEYS=true (then http://127.0.0.1:8190/consents/callback)',
    { optional: true },
  ),
}

export const tokenEncryptionVars = {
  TOKEN_ENCRYPTION_KEY: envVar(base64Key(32), 'base64 of 32 bytes: AES-256-GCM key for tokens at rest', { secret: true }),
  TOKEN_ENCRYPTION_KEY_ID: envVar(z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'expected 1-32 letters, digits, - or _'), 'id of TOKEN_ENCRYPTION_KEY, stored with every ciphertext for key rotation', {
    default: 'k1',
  }),
}

// Read by @tep/tracing (startTracing), which validates them with its own messages; listed
// here so that every service's --help and README table show them beside the rest.
// Optional plain strings: unset means tracing off, the OpenTelemetry SDK's defaults otherwise.
const otel = (description: string) => envVar(nonEmpty, description, { optional: true })
export const tracingVars = {
  OTEL_TRACES_EXPORTER: otel('otlp, console or both (comma-separated); none or unset: tracing off'),
  OTEL_SERVICE_NAME: otel('service.name of the spans (default: the service\'s name)'),
  OTEL_RESOURCE_ATTRIBUTES: otel('more resource attributes, key=value,... (percent-encoded values)'),
  OTEL_TRACES_SAMPLER: otel('parentbased_always_on (default), parentbased_traceidratio, traceidratio, always_on, always_off, parentbased_always_off'),
  OTEL_TRACES_SAMPLER_ARG: otel('ratio 0 to 1 for the traceidratio samplers (default 1)'),
  OTEL_EXPORTER_OTLP_ENDPOINT: otel('collector base URL; spans go to {it}/v1/traces (default http://localhost:4318)'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otel('full traces URL, used as it is (instead of OTEL_EXPORTER_OTLP_ENDPOINT)'),
  OTEL_EXPORTER_OTLP_HEADERS: otel('headers to the collector, key=value,...'),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: otel('headers of the traces requests only, key=value,... (added to OTEL_EXPORTER_OTLP_HEADERS)'),
  OTEL_EXPORTER_OTLP_PROTOCOL: otel('only http/protobuf is supported (the default)'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otel('the same for traces only (instead of OTEL_EXPORTER_OTLP_PROTOCOL)'),
  OTEL_SDK_DISABLED: otel('true: tracing off whatever else is set'),
}

export type EnrichmentAuth =
  | { kind: 'oauth'; tokenUrl: string; clientId: string; clientSecret: string }
  | { kind: 'basic'; user: string; password: string }

/**
 * Exactly one of the two credential kinds must be complete. Kept apart from the
 * per-variable parsing because the rule spans several variables.
 */
export function resolveEnrichmentAuth(cfg: {
  ENRICHMENT_API_URL: string
  ENRICHMENT_TOKEN_URL?: string | undefined
  ENRICHMENT_CLIENT_ID?: string | undefined
  ENRICHMENT_CLIENT_SECRET?: string | undefined
  ENRICHMENT_BASIC_USER?: string | undefined
  ENRICHMENT_BASIC_PASSWORD?: string | undefined
}): EnrichmentAuth | { problem: string } {
  const oauth = cfg.ENRICHMENT_CLIENT_ID !== undefined || cfg.ENRICHMENT_CLIENT_SECRET !== undefined
  const basic = cfg.ENRICHMENT_BASIC_USER !== undefined || cfg.ENRICHMENT_BASIC_PASSWORD !== undefined
  if (oauth && basic) return { problem: 'set either ENRICHMENT_CLIENT_ID/ENRICHMENT_CLIENT_SECRET or ENRICHMENT_BASIC_USER/ENRICHMENT_BASIC_PASSWORD, not both' }
  if (oauth) {
    if (!cfg.ENRICHMENT_CLIENT_ID || !cfg.ENRICHMENT_CLIENT_SECRET) return { problem: 'ENRICHMENT_CLIENT_ID and ENRICHMENT_CLIENT_SECRET must be set together' }
    return {
      kind: 'oauth',
      tokenUrl: cfg.ENRICHMENT_TOKEN_URL ?? `${cfg.ENRICHMENT_API_URL}/auth/protocol/openid-connect/token`,
      clientId: cfg.ENRICHMENT_CLIENT_ID,
      clientSecret: cfg.ENRICHMENT_CLIENT_SECRET,
    }
  }
  if (basic) {
    if (!cfg.ENRICHMENT_BASIC_USER || !cfg.ENRICHMENT_BASIC_PASSWORD) return { problem: 'ENRICHMENT_BASIC_USER and ENRICHMENT_BASIC_PASSWORD must be set together' }
    return { kind: 'basic', user: cfg.ENRICHMENT_BASIC_USER, password: cfg.ENRICHMENT_BASIC_PASSWORD }
  }
  return { problem: 'no enrichment credentials: set ENRICHMENT_CLIENT_ID and ENRICHMENT_CLIENT_SECRET (or the Basic pair)' }
}

/** The `tokenUrl` and `credentials` options of `createEnrichmentClient`, from a resolved `EnrichmentAuth`. */
export type EnrichmentClientAuth =
  | { tokenUrl: string; credentials: { type: 'oauth'; clientId: string; clientSecret: string } }
  | { credentials: { type: 'basic'; username: string; password: string } }

/**
 * Maps the configured credentials onto the enrichment client's options, so every
 * service wires them the same way: `createEnrichmentClient({ baseUrl, ...enrichmentClientAuth(auth), logger })`.
 */
export function enrichmentClientAuth(auth: EnrichmentAuth): EnrichmentClientAuth {
  return auth.kind === 'oauth'
    ? { tokenUrl: auth.tokenUrl, credentials: { type: 'oauth', clientId: auth.clientId, clientSecret: auth.clientSecret } }
    : { credentials: { type: 'basic', username: auth.user, password: auth.password } }
}
