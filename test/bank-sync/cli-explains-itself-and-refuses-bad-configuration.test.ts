import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { bankSyncEnv } from '@tep/bank-sync'

const MAIN = fileURLToPath(new URL('../../services/bank-sync/src/main.ts', import.meta.url))

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Nothing here reaches Kafka: --help and configuration errors exit before connecting.
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', KAFKA_BROKERS: '127.0.0.1:1', ...env },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

describe('bank-sync CLI', () => {
  it('--help names every variable with its default and never prints the client secret', async () => {
    const { code, stdout } = await run(['--help'])
    expect(code).toBe(0)
    for (const name of Object.keys(bankSyncEnv)) expect(stdout).toContain(name)
    expect(stdout).toContain('(default: 6h)')
    expect(stdout).not.toContain('tep-sim-secret')
  })

  it('refuses to run against a real bank without TOKEN_ENCRYPTION_KEY', async () => {
    const { code, stderr } = await run([], {
      BANK_API_URL: 'https://bank.example.com',
      TOKEN_ENCRYPTION_KEY: '',
    })
    expect(code).toBe(2)
    expect(stderr).toMatch(/TOKEN_ENCRYPTION_KEY is not set/)
  })

  it('refuses the public development keys for a loopback bank (a sidecar looks the same) without BANK_SYNC_DEVELOPMENT_KEYS', async () => {
    const { code, stderr } = await run([], {
      BANK_API_URL: 'http://127.0.0.1:15001',
      TOKEN_ENCRYPTION_KEY: '',
      CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: '',
      BANK_SYNC_DEVELOPMENT_KEYS: '',
    })
    expect(code).toBe(2)
    expect(stderr).toMatch(/TOKEN_ENCRYPTION_KEY/)
    expect(stderr).toMatch(/CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY/)
    expect(stderr).toMatch(/BANK_SYNC_DEVELOPMENT_KEYS=true/)
  })

  it('refuses the development switch against a bank that is not on loopback', async () => {
    const { code, stderr } = await run([], {
      BANK_API_URL: 'https://bank.example.com',
      TOKEN_ENCRYPTION_KEY: '',
      BANK_SYNC_DEVELOPMENT_KEYS: 'true',
    })
    expect(code).toBe(2)
    expect(stderr).toMatch(/TOKEN_ENCRYPTION_KEY is required when BANK_API_URL is not a loopback simulator/)
  })

  it('refuses to start against a real bank without its OAuth client (no simulator defaults), naming each variable', async () => {
    const { code, stderr } = await run([], {
      BANK_API_URL: 'https://bank.example.com',
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: randomBytes(32).toString('base64'),
      BANK_CLIENT_ID: '',
      BANK_CLIENT_SECRET: '',
      BANK_REDIRECT_URI: '',
      BANK_SYNC_DEVELOPMENT_KEYS: '',
    })
    expect(code).toBe(2)
    expect(stderr).toMatch(/BANK_CLIENT_ID, BANK_CLIENT_SECRET, BANK_REDIRECT_URI are not set/)
  })

  it('refuses BANK_PKCE=off without KAFKA_ALLOW_INSECURE=true', async () => {
    const { code, stderr } = await run([], { BANK_PKCE: 'off', KAFKA_ALLOW_INSECURE: '', BANK_SYNC_DEVELOPMENT_KEYS: 'true', BANK_API_URL: 'http://127.0.0.1:8182' })
    expect(code).toBe(2)
    expect(stderr).toMatch(/BANK_PKCE=off is refused unless KAFKA_ALLOW_INSECURE=true/)
  })

  it('names the bad variable, without echoing a secret', async () => {
    const { code, stderr } = await run([], { BANK_PAGE_SIZE: '5', TOKEN_ENCRYPTION_KEY: 'not-base64-!!' })
    expect(code).toBe(2)
    expect(stderr).toMatch(/BANK_PAGE_SIZE/)
    const keyProblem = await run([], { TOKEN_ENCRYPTION_KEY: 'c2hvcnQ=' })
    expect(keyProblem.code).toBe(2)
    expect(keyProblem.stderr).toMatch(/TOKEN_ENCRYPTION_KEY|32 bytes/)
    expect(keyProblem.stderr).not.toContain('c2hvcnQ=')
  })
})
