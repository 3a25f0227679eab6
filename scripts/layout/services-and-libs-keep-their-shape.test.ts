import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The layout promises of the README: services/ holds what is deployed and
// nothing else; a library file over ~400 lines is usually two concepts.
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const MAX_LIB_FILE_LINES = 450

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full)
    return /\.(?:ts|mjs|js)$/.test(entry.name) ? [full] : []
  })
}

describe('repository layout', () => {
  it('services/ holds exactly the four deployables', () => {
    const services = readdirSync(path.join(ROOT, 'services')).filter((name) =>
      statSync(path.join(ROOT, 'services', name)).isDirectory(),
    )
    expect(services.sort()).toEqual(['bank-sync', 'invalidation-poller', 'refresher', 'transaction-ingest'])
  })

  it(`no source file under libs/ (tests included) is over ${MAX_LIB_FILE_LINES} lines`, () => {
    const files = sourceFiles(path.join(ROOT, 'libs'))
    expect(files.length).toBeGreaterThan(50)
    const tooLong = files
      .map((file) => ({
        file: path.relative(ROOT, file),
        lines: readFileSync(file, 'utf8').split('\n').length - 1,
      }))
      .filter((f) => f.lines > MAX_LIB_FILE_LINES)
    expect(tooLong).toEqual([])
  })
})
