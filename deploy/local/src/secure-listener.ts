import { execFile } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { LocalStackError } from './errors.ts'
import { freePort } from './ports.ts'

const run = promisify(execFile)

/**
 * An optional second client listener of the local broker, SASL_SSL on loopback,
 * so that TLS and SASL (PLAIN and SCRAM-SHA-512) are tested against a real
 * broker: a throw-away CA and a broker certificate for 127.0.0.1/localhost made
 * with openssl, a PLAIN user (in the listener's JAAS config) and a SCRAM user
 * (written into the KRaft metadata when the log dir is formatted). The
 * PLAINTEXT listener stays for the broker's own use and for readiness.
 */
export interface SecureListenerOptions {
  plain?: { username: string; password: string }
  scram?: { username: string; password: string }
}

export interface SecureListener {
  port: number
  brokers: string[]
  /** PEM file of the CA that signed the broker certificate (KAFKA_SSL_CA_FILE). */
  caFile: string
  ca: string
  plain: { username: string; password: string }
  scram: { username: string; password: string }
}

export const DEFAULT_SECURE_USERS = {
  plain: { username: 'tep-plain', password: 'tep-plain-secret' },
  scram: { username: 'tep-scram', password: 'tep-scram-secret' },
} as const

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd })
  } catch (err) {
    throw new LocalStackError(
      `openssl ${args[0]} failed while making the SASL_SSL listener's certificates (is openssl installed?): ${(err as Error).message}`,
      { code: 'STARTUP_FAILED' },
    )
  }
}

/** Makes the CA and the broker key/certificate under `<stateDir>/tls` and picks a port. */
export async function prepareSecureListener(
  stateDir: string,
  options: SecureListenerOptions,
): Promise<SecureListener & { keyFile: string; certFile: string }> {
  const dir = path.join(stateDir, 'tls')
  await mkdir(dir, { recursive: true })
  await writeFile(
    path.join(dir, 'broker.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
  )
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=tep local test CA'], dir)
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'broker.key', '-out', 'broker.csr', '-subj', '/CN=127.0.0.1'], dir)
  await openssl(['x509', '-req', '-in', 'broker.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'broker.pem', '-days', '2', '-extfile', 'broker.ext'], dir)
  // Kafka's PEM key store wants an unencrypted PKCS#8 key (what -nodes writes) followed by the chain.
  const [key, cert, ca] = await Promise.all(['broker.key', 'broker.pem', 'ca.pem'].map((f) => readFile(path.join(dir, f), 'utf8')))
  await writeFile(path.join(dir, 'broker-keystore.pem'), `${key}${cert}${ca}`)
  const port = await freePort()
  return {
    port,
    brokers: [`127.0.0.1:${port}`],
    caFile: path.join(dir, 'ca.pem'),
    ca: ca as string,
    keyFile: path.join(dir, 'broker.key'),
    certFile: path.join(dir, 'broker.pem'),
    plain: options.plain ?? { ...DEFAULT_SECURE_USERS.plain },
    scram: options.scram ?? { ...DEFAULT_SECURE_USERS.scram },
  }
}

function jaasQuote(value: string): string {
  return JSON.stringify(value)
}

/** Lines to append to server.properties (listeners are rewritten by `withSecureListener`). */
export function secureListenerProperties(listener: SecureListener & { keyFile: string; certFile: string }): string[] {
  const dir = path.dirname(listener.caFile)
  return [
    'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512',
    'listener.name.sasl_ssl.ssl.keystore.type=PEM',
    `listener.name.sasl_ssl.ssl.keystore.location=${path.join(dir, 'broker-keystore.pem')}`,
    'listener.name.sasl_ssl.ssl.client.auth=none',
    `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${listener.plain.username}=${jaasQuote(listener.plain.password)};`,
    'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
  ]
}

/** server.properties with the SASL_SSL listener added next to PLAINTEXT. */
export function withSecureListener(properties: string, listener: SecureListener & { keyFile: string; certFile: string }): string {
  const lines = properties.split('\n').map((line) => {
    if (line.startsWith('listeners=')) return line.replace('listeners=', `listeners=SASL_SSL://127.0.0.1:${listener.port},`)
    if (line.startsWith('advertised.listeners=')) return `${line},SASL_SSL://127.0.0.1:${listener.port}`
    if (line.startsWith('listener.security.protocol.map=')) return `${line},SASL_SSL:SASL_SSL`
    return line
  })
  return [...lines.filter((l) => l !== ''), ...secureListenerProperties(listener), ''].join('\n')
}

/** The StorageTool arguments that create the SCRAM user in the new cluster's metadata. */
export function scramFormatArgs(listener: SecureListener): string[] {
  return ['--add-scram', `SCRAM-SHA-512=[name=${listener.scram.username},password=${listener.scram.password}]`]
}
