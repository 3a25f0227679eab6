import { readFileSync } from 'node:fs'
import { envDocProblems } from '@tep/config'
import { describe, expect, it } from 'vitest'
import { pollerEnv } from './config.ts'

describe('README', () => {
  it('lists every environment variable with its current default', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    expect(envDocProblems(readme, pollerEnv)).toEqual([])
  })
})
