/**
 * Static checks of the Dockerfile (no Docker engine on these machines): the image
 * installs production dependencies of the deployed workspaces only (the dependency
 * tree npm would install for exactly that selection holds no test tooling), and
 * applies the project's KafkaJS patch explicitly, failing the build if it did not take.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8')
const install = dockerfile
  .replaceAll('\\\n', ' ')
  .split('\n')
  .find((l) => l.startsWith('RUN npm ci'))

describe('Dockerfile', () => {
  it('installs production dependencies of the deployed workspaces only', () => {
    expect(install).toBeDefined()
    expect(install).toContain('--omit=dev')
    const selected = [...(install ?? '').matchAll(/-w (\S+)/g)].map((m) => m[1] as string)
    expect(selected.sort()).toEqual(['libs', 'schemas', 'services', 'simulators'])
    const tree = execFileSync(
      'npm',
      ['ls', '--omit=dev', '--all', '--parseable', ...selected.flatMap((w) => ['-w', w])],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    )
    expect(tree).toMatch(/node_modules\/kafkajs$/m)
    for (const tooling of ['testcontainers', 'playwright-core', 'vitest', 'eslint', 'typescript']) {
      expect(tree, tooling).not.toMatch(new RegExp(`node_modules/${tooling}$`, 'm'))
    }
  })

  it('applies the KafkaJS patch and fails the build when it did not take', () => {
    expect(dockerfile).toContain('COPY scripts/patch-kafkajs.mjs scripts/')
    expect(install).toContain('node scripts/patch-kafkajs.mjs')
    const patch = readFileSync(new URL('./patch-kafkajs.mjs', import.meta.url), 'utf8')
    const mark = /const MARK = '\/\* (tep-patch: [^*]+) \*\/'/.exec(patch)?.[1]
    expect(mark).toBeDefined()
    expect(install).toContain(`grep -qF '${mark!.trim()}' node_modules/kafkajs/src/network/requestQueue/index.js`)
  })
})
