import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { EnrichmentSimConfigError } from './errors.ts'

const run = promisify(execFile)

export interface TlsMaterial {
  key: string
  cert: string
}

/**
 * A throw-away self-signed certificate for localhost / 127.0.0.1 (P-256, 7 days).
 * node:crypto can make keys but not X.509 certificates, so this calls the
 * `openssl` command line tool; the key never leaves the process afterwards.
 */
export async function selfSignedCertificate(hosts: readonly string[] = ['localhost', '127.0.0.1', '::1']): Promise<TlsMaterial> {
  const dir = await mkdtemp(join(tmpdir(), 'enrichment-sim-tls-'))
  try {
    const keyFile = join(dir, 'key.pem')
    const certFile = join(dir, 'cert.pem')
    const san = hosts.map((h) => (/^[0-9.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',')
    try {
      await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '7', '-subj', '/CN=enrichment-sim', '-addext', `subjectAltName=${san}`, '-keyout', keyFile, '-out', certFile])
    } catch (err) {
      throw new EnrichmentSimConfigError(`--https needs the openssl command to generate a self-signed certificate: ${(err as Error).message}`)
    }
    return { key: await readFile(keyFile, 'utf8'), cert: await readFile(certFile, 'utf8') }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
