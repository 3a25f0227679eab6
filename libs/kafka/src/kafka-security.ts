import { secretFromEnv } from '@tep/config'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { KafkaConfigError } from './errors.ts'

/**
 * TLS and SASL to the brokers, in the project's own shape (createKafka keeps it;
 * platformaticSecurityOptions maps it to @platformatic/kafka's options). Produced from the environment by
 * `kafkaSecurityFromEnv`, which every service and tool reads at start-up.
 */
export interface KafkaSecurity {
  /**
   * `true`: TLS with the system CAs. PEM text (not paths) otherwise. `servername`:
   * the SNI name sent to every broker (KAFKA_SSL_SERVER_NAME); unset, each broker's
   * host name is sent (never an IP address, which SNI does not allow).
   */
  tls?: { ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean; servername?: string } | true
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  /**
   * Settings that expose credentials or data, accepted only because
   * KAFKA_ALLOW_INSECURE=true: createKafka logs each at warn level on every start.
   */
  insecure?: string[]
}

/**
 * Basic auth of the schema registry (Confluent-compatible client). A private CA
 * for an https registry is given to Node with NODE_EXTRA_CA_CERTS (read at
 * process start), since the registry client takes no CA option of its own.
 */
export interface SchemaRegistrySecurity {
  auth?: { username: string; password: string }
}

export const KAFKA_SECURITY_VARIABLES = {
  KAFKA_SECURITY_PROTOCOL: 'PLAINTEXT (default), SSL, SASL_SSL, or SASL_PLAINTEXT (only with KAFKA_ALLOW_INSECURE=true)',
  KAFKA_SASL_MECHANISM: 'PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (required with SASL_*)',
  KAFKA_SASL_USERNAME: 'SASL user (required with SASL_*)',
  KAFKA_SASL_PASSWORD: 'SASL password (or KAFKA_SASL_PASSWORD_FILE: a file holding it)',
  KAFKA_SSL_CA_FILE: 'PEM file of the CA(s) that signed the brokers (default: the system CAs)',
  KAFKA_SSL_CERT_FILE: 'PEM client certificate for mutual TLS (with KAFKA_SSL_KEY_FILE)',
  KAFKA_SSL_KEY_FILE: 'PEM private key of KAFKA_SSL_CERT_FILE',
  KAFKA_SSL_REJECT_UNAUTHORIZED: 'true (default); false (no certificate check) only with KAFKA_ALLOW_INSECURE=true, for a throw-away test broker',
  KAFKA_SSL_SERVER_NAME: 'SNI name sent to the brokers (default: each broker\'s host name; none for an IP address)',
  KAFKA_ALLOW_INSECURE:
    'true accepts SASL_PLAINTEXT (credentials and data in clear) and KAFKA_SSL_REJECT_UNAUTHORIZED=false, with a warning on every start; otherwise both are refused',
  SCHEMA_REGISTRY_USERNAME: 'HTTP basic auth user of the schema registry',
  SCHEMA_REGISTRY_PASSWORD: 'its password (or SCHEMA_REGISTRY_PASSWORD_FILE)',
} as const

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const
const MECHANISMS = { PLAIN: 'plain', 'SCRAM-SHA-256': 'scram-sha-256', 'SCRAM-SHA-512': 'scram-sha-512' } as const

type Env = Record<string, string | undefined>
type ReadFile = (path: string) => string

const defaultRead: ReadFile = (path) => readFileSync(path, 'utf8')

function value(env: Env, name: string): string | undefined {
  const v = env[name]
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}

/** `NAME`, or the content of the file `NAME_FILE` (Kubernetes secrets mounted as files): @tep/config's one implementation. */
function secret(env: Env, name: string, read: ReadFile, problems: string[]): string | undefined {
  const found = secretFromEnv(env, name, read)
  if (!found.ok) {
    problems.push(found.problem)
    return undefined
  }
  return found.value
}

function pem(path: string, name: string, read: ReadFile, problems: string[]): string | undefined {
  try {
    return read(path)
  } catch (err) {
    problems.push(`${name}=${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`)
    return undefined
  }
}

/**
 * Reads and validates the Kafka security variables. Every problem is reported at
 * once, with the variable's name; nothing is half-configured (a SASL user
 * without SASL_* protocol is an error, not silently ignored).
 */
export function kafkaSecurityFromEnv(env: Env = process.env, read: ReadFile = defaultRead): KafkaSecurity {
  const problems: string[] = []
  const protocolRaw = (value(env, 'KAFKA_SECURITY_PROTOCOL') ?? 'PLAINTEXT').toUpperCase()
  const protocol = (PROTOCOLS as readonly string[]).includes(protocolRaw)
    ? (protocolRaw as (typeof PROTOCOLS)[number])
    : undefined
  if (protocol === undefined) {
    problems.push(`KAFKA_SECURITY_PROTOCOL must be one of ${PROTOCOLS.join(', ')}, got ${JSON.stringify(protocolRaw)}`)
  }
  const allowInsecureRaw = value(env, 'KAFKA_ALLOW_INSECURE')?.toLowerCase()
  if (allowInsecureRaw !== undefined && !['true', 'false'].includes(allowInsecureRaw)) {
    problems.push(`KAFKA_ALLOW_INSECURE must be true or false, got ${JSON.stringify(allowInsecureRaw)}`)
  }
  const allowInsecure = allowInsecureRaw === 'true'
  const insecure: string[] = []
  /** A setting that exposes credentials or data: refused unless KAFKA_ALLOW_INSECURE=true says it is meant. */
  const insecureSetting = (what: string) => {
    if (allowInsecure) insecure.push(what)
    else problems.push(`${what}: refused unless KAFKA_ALLOW_INSECURE=true (never against a production cluster)`)
  }
  if (protocol === 'SASL_PLAINTEXT') {
    insecureSetting(
      'KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT sends the SASL credentials (in clear with PLAIN) and every record unencrypted; use SASL_SSL',
    )
  }
  const useTls = protocol === 'SSL' || protocol === 'SASL_SSL'
  const useSasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL'
  const security: KafkaSecurity = {}

  const caFile = value(env, 'KAFKA_SSL_CA_FILE')
  const certFile = value(env, 'KAFKA_SSL_CERT_FILE')
  const keyFile = value(env, 'KAFKA_SSL_KEY_FILE')
  const rejectRaw = value(env, 'KAFKA_SSL_REJECT_UNAUTHORIZED')
  const serverName = value(env, 'KAFKA_SSL_SERVER_NAME')
  if (!useTls && protocol !== undefined && (caFile ?? certFile ?? keyFile ?? rejectRaw ?? serverName) !== undefined) {
    problems.push(`KAFKA_SSL_* variables are set but KAFKA_SECURITY_PROTOCOL is ${protocol}; use SSL or SASL_SSL`)
  }
  if (useTls) {
    const tls: Exclude<KafkaSecurity['tls'], true | undefined> = {}
    if (caFile !== undefined) tls.ca = pem(caFile, 'KAFKA_SSL_CA_FILE', read, problems)
    if ((certFile === undefined) !== (keyFile === undefined)) {
      problems.push('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (mutual TLS needs both)')
    } else if (certFile !== undefined && keyFile !== undefined) {
      tls.cert = pem(certFile, 'KAFKA_SSL_CERT_FILE', read, problems)
      tls.key = pem(keyFile, 'KAFKA_SSL_KEY_FILE', read, problems)
    }
    if (rejectRaw !== undefined) {
      if (!['true', 'false'].includes(rejectRaw.toLowerCase())) {
        problems.push(`KAFKA_SSL_REJECT_UNAUTHORIZED must be true or false, got ${JSON.stringify(rejectRaw)}`)
      } else {
        tls.rejectUnauthorized = rejectRaw.toLowerCase() === 'true'
        if (!tls.rejectUnauthorized)
          insecureSetting('KAFKA_SSL_REJECT_UNAUTHORIZED=false accepts any certificate, so anyone on the path can read and change the traffic')
      }
    }
    if (serverName !== undefined) {
      if (!/^[A-Za-z0-9.-]+$/.test(serverName) || isIP(serverName) !== 0)
        problems.push(`KAFKA_SSL_SERVER_NAME must be a DNS host name (SNI allows no IP address), got ${JSON.stringify(serverName)}`)
      else tls.servername = serverName
    }
    security.tls = Object.keys(tls).length === 0 ? true : tls
  }

  const mechanismRaw = value(env, 'KAFKA_SASL_MECHANISM')
  const username = value(env, 'KAFKA_SASL_USERNAME')
  const password = secret(env, 'KAFKA_SASL_PASSWORD', read, problems)
  if (!useSasl && protocol !== undefined && (mechanismRaw ?? username ?? password) !== undefined) {
    problems.push(`KAFKA_SASL_* variables are set but KAFKA_SECURITY_PROTOCOL is ${protocol}; use SASL_PLAINTEXT or SASL_SSL`)
  }
  if (useSasl) {
    const mechanism = MECHANISMS[(mechanismRaw ?? '').toUpperCase() as keyof typeof MECHANISMS]
    if (mechanism === undefined) {
      problems.push(
        `KAFKA_SASL_MECHANISM must be one of ${Object.keys(MECHANISMS).join(', ')} with ${protocol}, got ${mechanismRaw === undefined ? 'nothing' : JSON.stringify(mechanismRaw)}`,
      )
    }
    if (username === undefined) problems.push(`KAFKA_SASL_USERNAME is required with ${protocol}`)
    const conflicting = problems.some((p) => p.startsWith('set KAFKA_SASL_PASSWORD or'))
    if (password === undefined && !conflicting)
      problems.push(`KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE) is required with ${protocol}`)
    if (mechanism !== undefined && username !== undefined && password !== undefined) {
      security.sasl = { mechanism, username, password }
    }
  }
  if (problems.length > 0) {
    throw new KafkaConfigError(`Kafka security configuration is invalid:\n  - ${problems.join('\n  - ')}`, { problems })
  }
  if (insecure.length > 0) security.insecure = insecure
  return security
}

/** The registry's basic auth from the environment (validated like the Kafka variables). */
export function schemaRegistrySecurityFromEnv(
  env: Env = process.env,
  read: ReadFile = defaultRead,
): SchemaRegistrySecurity {
  const problems: string[] = []
  const username = value(env, 'SCHEMA_REGISTRY_USERNAME')
  const password = secret(env, 'SCHEMA_REGISTRY_PASSWORD', read, problems)
  if ((username === undefined) !== (password === undefined)) {
    problems.push('SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD go together')
  }
  if (problems.length > 0) {
    throw new KafkaConfigError(`schema registry security configuration is invalid:\n  - ${problems.join('\n  - ')}`, { problems })
  }
  return username !== undefined && password !== undefined ? { auth: { username, password } } : {}
}
