import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { bankSyncEnv } from './config.ts'

describe('README', () => {
  it('documents every environment variable the service reads', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    for (const name of Object.keys(bankSyncEnv)) expect(readme, name).toContain(`\`${name}\``)
  })
})
