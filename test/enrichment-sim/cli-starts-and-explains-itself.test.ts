import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const MAIN = fileURLToPath(new URL('../../simulators/enrichment-sim/src/main.ts', import.meta.url))

function run(args: string[], env: Record<string, string> = {}): { done: Promise<{ code: number | null; stdout: string; stderr: string }>; kill: () => void; firstLine: Promise<string> } {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } })
  let stdout = ''
  let stderr = ''
  let resolveLine: (line: string) => void = () => {}
  const firstLine = new Promise<string>((resolve) => (resolveLine = resolve))
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    if (stdout.includes('\n')) resolveLine(stdout.split('\n')[0] as string)
  })
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
  return { done, kill: () => child.kill('SIGTERM'), firstLine }
}

describe('npm run sim:enrichment', () => {
  it('--help lists the options and the credential variables with their defaults', async () => {
    const { code, stdout } = await run(['--help']).done
    expect(code).toBe(0)
    for (const text of ['--port N', '--https', '--mutations N', '--rate-limit', 'SIM_CLIENT_ID', 'SIM_BASIC_PASSWORD', '(default: sim-client)']) expect(stdout).toContain(text)
    expect(stdout).not.toContain('sim-secret')
  })

  it('rejects a bad option with a message and exit code 2', async () => {
    const { code, stderr } = await run(['--shops', 'many']).done
    expect(code).toBe(2)
    expect(stderr).toMatch(/--shops must be an integer/)
  })

  it('starts on the given port with the credentials from the environment, and stops on SIGTERM', async () => {
    const proc = run(['--port', '0', '--shops', '300', '--merchants', '30', '--mutations', '0'], { SIM_CLIENT_ID: 'env-client', SIM_CLIENT_SECRET: 'env-secret' })
    const line = await proc.firstLine
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1]
    expect(url, line).toBeDefined()
    const res = await fetch(`${url}/auth/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=env-client&client_secret=env-secret',
    })
    expect(res.status).toBe(200)
    proc.kill()
    expect((await proc.done).code).toBe(0)
  })
})
