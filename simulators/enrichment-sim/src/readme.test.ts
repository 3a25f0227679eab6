import { readFileSync } from 'node:fs'
import { envDocProblems } from '@tep/config'
import { describe, expect, it } from 'vitest'
import { SIM_ENV } from './cli-env.ts'
import { CLI_USAGE } from './cli-options.ts'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

describe('README', () => {
  it('lists every environment variable with its current default', () => {
    expect(envDocProblems(readme, SIM_ENV)).toEqual([])
  })

  it('documents every command-line option of --help', () => {
    const options = [...CLI_USAGE.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1])
    expect(options.length).toBeGreaterThan(5)
    const missing = options.filter((option) => !readme.includes(`| \`${option}`))
    expect(missing).toEqual([])
  })
})
