import { readFileSync } from 'node:fs'
import { formatEnvMarkdown } from '@tep/config'
import { describe, expect, it } from 'vitest'
import { INGEST_ENV } from './config.ts'

/** Table cells without the padding a formatter may add. */
function normalise(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) =>
      line
        .trim()
        .replace(/\s*\|\s*/g, '|')
        .replace(/-{3,}/g, '---'),
    )
    .join('\n')
}

describe('README', () => {
  it('lists every environment variable with its current default', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    expect(normalise(readme)).toContain(normalise(formatEnvMarkdown(INGEST_ENV)))
  })
})
