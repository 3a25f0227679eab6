import { KAFKA_SECURITY_VARIABLES } from '@tep/kafka'

/**
 * What the table loader child needs of the ingest's environment: how to reach Kafka and the
 * registry (their security variables, the passwords' `*_FILE` paths), the runtime's own
 * variables and the locale. Nothing else: the enrichment API's client secret and whatever else
 * the service was given stay in the service, out of a child that never calls the API.
 */
const RUNTIME = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LC_ALL', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'GLIBC_TUNABLES', 'MALLOC_ARENA_MAX']
const KAFKA = [...Object.keys(KAFKA_SECURITY_VARIABLES), 'KAFKA_SASL_PASSWORD_FILE', 'SCHEMA_REGISTRY_PASSWORD_FILE']

export const LOADER_ENV_NAMES: ReadonlySet<string> = new Set([...RUNTIME, ...KAFKA])

export function loaderEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {}
  for (const name of LOADER_ENV_NAMES) if (env[name] !== undefined) out[name] = env[name]
  return out
}
