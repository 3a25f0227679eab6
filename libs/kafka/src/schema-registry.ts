import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry'
import { isLoopbackHost } from '@tep/config'
import type { AvroSchemaJson } from '@tep/schemas'
import { KafkaConfigError, SchemaRegistrationError, SchemaRegistryUnavailableError } from './errors.ts'
import { SILENT_LOGGER, type KafkaLogger } from './logger.ts'

export interface SchemaRegistryConfig {
  /** Confluent-compatible base URL, e.g. http://127.0.0.1:8081/apis/ccompat/v7 for Apicurio. */
  url: string
  auth?: { username: string; password: string }
  /** HTTP retries of the registry client per call; default 2. */
  retries?: number
  /** Where the plain-http warning goes (see checkRegistryTransport). */
  logger?: KafkaLogger
}


/**
 * The registry's transport rule: basic-auth credentials are never sent over
 * http:// to a host off loopback (refused: anyone on the path would read them);
 * plain http without credentials is allowed, since many internal registries serve
 * it, but warned about: a writer schema can be altered on the path. Returns the
 * warning, if any.
 */
export function checkRegistryTransport(url: string, hasCredentials: boolean): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new KafkaConfigError(`SCHEMA_REGISTRY_URL is not a URL: ${JSON.stringify(url)}`)
  }
  if (parsed.protocol === 'https:' || isLoopbackHost(parsed.hostname)) return undefined
  if (parsed.protocol !== 'http:') throw new KafkaConfigError(`SCHEMA_REGISTRY_URL must be http(s)://, got ${parsed.protocol}`)
  if (hasCredentials) {
    throw new KafkaConfigError(
      `SCHEMA_REGISTRY_USERNAME/PASSWORD would be sent in clear over http:// to ${parsed.host}: use an https:// SCHEMA_REGISTRY_URL (or a registry on loopback)`,
    )
  }
  return `schema registry ${parsed.host} over plain http: schemas can be read and altered on the path; use https:// where you can`
}

export function createSchemaRegistry(config: SchemaRegistryConfig): SchemaRegistry {
  const warning = checkRegistryTransport(config.url, config.auth !== undefined)
  if (warning !== undefined) (config.logger ?? SILENT_LOGGER).warn({ registry: new URL(config.url).host }, warning)
  return new SchemaRegistry({
    host: config.url.replace(/\/+$/, ''),
    auth: config.auth,
    retry: { retries: config.retries ?? 2 },
  })
}

/** Levels under which every new version can read data written with the previous one. */
const BACKWARD_OR_STRICTER = new Set(['BACKWARD', 'BACKWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE'])

// The registry client reports a refused connection as a 400 whose message holds
// the socket error, so network failures are told apart by their message.
const NETWORK_FAILURE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EHOSTUNREACH|EPIPE|socket hang up|timeout|network/i

interface HttpishError {
  status?: number
  message?: string
}

function statusOf(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && typeof (err as HttpishError).status === 'number'
    ? (err as HttpishError).status
    : undefined
}

/** True when a registry call failed because the registry is unreachable or unhealthy (so retry later). */
export function isRegistryUnavailable(err: unknown): boolean {
  const status = statusOf(err)
  const message = err instanceof Error ? err.message : String(err)
  const code = typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : ''
  if (status === undefined) return NETWORK_FAILURE.test(message) || NETWORK_FAILURE.test(code)
  return status >= 500 || status === 429 || status === 408 || NETWORK_FAILURE.test(message)
}

/** HTTP status of a registry client error, when it has one. */
export function registryErrorStatus(err: unknown): number | undefined {
  return statusOf(err)
}

interface SubjectApi {
  Subject: {
    config(args: { subject: string }): Promise<{ data(): { compatibilityLevel?: string } }>
    updateConfig(args: { subject: string; body: { compatibility: string } }): Promise<unknown>
  }
}

function apiOf(registry: SchemaRegistry): SubjectApi {
  // `api` is private in the client's typings but is its documented mappersmith client.
  return (registry as unknown as { api: SubjectApi }).api
}

export interface RegisterOptions {
  /** Default BACKWARD (the project contract). */
  compatibility?: keyof typeof COMPATIBILITY
  logger?: KafkaLogger
}

/**
 * Registers `schema` under `subject` with BACKWARD compatibility and returns its id.
 *
 * Why not just `registry.register(schema, { subject, compatibility })`: the
 * client first reads GET /config/{subject} and throws "Compatibility does not
 * match" when the level differs. Apicurio answers that GET with 200 and the
 * global default (NONE) for a subject without its own level, where Confluent
 * answers 404, so any subject created by another tool, or whose level was never
 * set, could not be registered. Here the subject level is set (PUT /config) to
 * the wanted level first whenever it is not already at least as strict, and the
 * client is then told the level it will find. Setting it before the first
 * version also closes the window in which a new subject exists without a rule.
 */
export async function registerSubjectSchema(
  registry: SchemaRegistry,
  subject: string,
  schema: AvroSchemaJson,
  options: RegisterOptions = {},
): Promise<number> {
  const wanted = options.compatibility ?? 'BACKWARD'
  const logger = options.logger ?? SILENT_LOGGER
  const api = apiOf(registry)
  try {
    let level: string | undefined
    try {
      level = (await api.Subject.config({ subject })).data().compatibilityLevel?.toUpperCase()
    } catch (err) {
      if (statusOf(err) !== 404) throw err
    }
    const acceptable =
      level !== undefined && (level === wanted || (wanted === 'BACKWARD' && BACKWARD_OR_STRICTER.has(level)))
    if (!acceptable) {
      try {
        await api.Subject.updateConfig({ subject, body: { compatibility: wanted } })
      } catch (err) {
        // Two instances starting together both found no level and both create it: Apicurio
        // answers the second 409 "A rule named 'COMPATIBILITY' already exists". The rule
        // exists now, so the same request updates it.
        if (statusOf(err) !== 409) throw err
        await api.Subject.updateConfig({ subject, body: { compatibility: wanted } })
      }
      if (level !== undefined)
        logger.warn({ subject, from: level, to: wanted }, 'schema subject compatibility level set')
      level = wanted
    }
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(schema) },
      { subject, compatibility: level as COMPATIBILITY, updateConfig: false },
    )
    return id
  } catch (err) {
    if (isRegistryUnavailable(err)) {
      throw new SchemaRegistryUnavailableError(
        `schema registry unavailable while registering subject ${subject}: ${(err as Error).message}`,
        err,
        { subject },
      )
    }
    throw new SchemaRegistrationError(
      `schema registry refused the schema for subject ${subject} (status ${statusOf(err) ?? 'none'}): ${(err as Error).message}`,
      err,
      { subject, status: statusOf(err) },
    )
  }
}
