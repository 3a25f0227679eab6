import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

/** The .dockerignore patterns (podman and docker read it), without comments and negations. */
function ignorePatterns(): string[] {
  return readFileSync(path.join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('!'))
}

/** Whether the build context leaves `file` out: the file, or one of its folders, matches a pattern. */
function ignored(file: string, patterns: string[]): boolean {
  const parts = file.split('/')
  for (let i = 1; i <= parts.length; i++) {
    const prefix = parts.slice(0, i).join('/')
    if (patterns.some((p) => path.matchesGlob(prefix, p.replace(/\/$/, '')))) return true
  }
  return false
}

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .filter((f) => !f.split(path.sep).includes('node_modules'))
}

describe('the image build context (.dockerignore)', () => {
  // What the Dockerfile copies whole: COPY libs, COPY services, COPY schemas.
  const copied = ['libs', 'services', 'schemas'].flatMap(filesUnder)
  const patterns = ignorePatterns()

  it('leaves out every test, fixture and key file the Dockerfile would copy', () => {
    const kept = copied.filter((f) => /\.test\.ts$|\.test-support\.ts$|\.fixture\.ts$|__fixtures__|\.pem$|\.key$/.test(f) && !ignored(f, patterns))
    expect(copied.some((f) => f.endsWith('localhost-key.pem'))).toBe(true)
    expect(kept).toEqual([])
  })

  it('keeps every source file the services run', () => {
    const lost = copied.filter((f) => /\/src\/[^/]+(\/[^/]+)*\.ts$/.test(f) && !/\.(test|test-support|fixture)\.ts$/.test(f) && !f.includes('__fixtures__') && ignored(f, patterns))
    expect(lost).toEqual([])
  })

  it('leaves out secrets/, which .gitignore keeps out of commits too', () => {
    expect(ignored('secrets/bank/TOKEN_ENCRYPTION_KEY', patterns)).toBe(true)
    expect(readFileSync(path.join(root, '.gitignore'), 'utf8').split('\n')).toContain('secrets/')
  })
})
