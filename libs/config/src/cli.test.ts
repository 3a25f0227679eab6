import { afterEach, describe, expect, it, vi } from 'vitest'
import { exitWithConfigProblem, loadConfigOrExit } from './cli.ts'
import { envVar } from './env-spec.ts'
import { port } from './parsers.ts'

class Exit extends Error {
  readonly code: number | undefined
  constructor(code: number | undefined) {
    super(`exit ${code}`)
    this.code = code
  }
}

function capture() {
  const written: string[] = []
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk))
    return true
  })
  vi.spyOn(process, 'exit').mockImplementation((code?: string | number | null) => {
    throw new Exit(code === null ? undefined : Number(code))
  })
  return written
}

afterEach(() => vi.restoreAllMocks())

describe('loadConfigOrExit', () => {
  it('returns the parsed configuration when every variable is valid', () => {
    expect(loadConfigOrExit('svc', { P: envVar(port, 'a port') }, { P: '80' })).toEqual({ P: 80 })
  })

  it('prints every problem and exits 2 instead of throwing', () => {
    const written = capture()
    expect(() => loadConfigOrExit('svc', { P: envVar(port, 'a port'), Q: envVar(port, 'another') }, { P: 'x' })).toThrow(new Exit(2))
    expect(written.join('')).toContain('invalid configuration for svc:\n  - P: ')
    expect(written.join('')).toContain('  - Q: is required')
  })
})

describe('exitWithConfigProblem', () => {
  it('reports a cross-variable problem in the same words and exits 2', () => {
    const written = capture()
    expect(() => exitWithConfigProblem('svc', 'A_ID', 'A_ID and A_SECRET must be set together')).toThrow(new Exit(2))
    expect(written.join('')).toBe('invalid configuration for svc:\n  - A_ID: A_ID and A_SECRET must be set together\nRun with --help to see every variable.\n')
  })
})
