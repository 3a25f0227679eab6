import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { describe, expect, it } from 'vitest'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * Every YAML file git knows parses. The OpenAPI files, manifests and compose
 * file are read by integration tests only; an apostrophe inside a single-quoted
 * description once broke enrichment-v5.yaml and only a 20-minute suite said so.
 */
describe('YAML files', () => {
  it('all parse, with the file and line of the first error named', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.yaml', '*.yml'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
    expect(files.length).toBeGreaterThan(5)
    const errors: string[] = []
    for (const file of files) {
      for (const doc of parseAllDocuments(readFileSync(path.join(root, file), 'utf8'))) {
        const first = doc.errors[0]
        if (first !== undefined) errors.push(`${file}:${first.linePos?.[0]?.line ?? '?'}: ${first.message.split('\n')[0]}`)
      }
    }
    expect(errors).toEqual([])
  })
})
