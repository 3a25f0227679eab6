/**
 * Static checks of the Dockerfile (no Docker engine on these machines): the
 * production image (the default, last target) installs production dependencies of
 * the deployed workspaces only (the dependency tree npm would install for exactly
 * that selection holds no test tooling) and holds no simulators; the demo target
 * adds them for docker-compose; both apply patches/*.patch with the root's postinstall
 * (patch-package, which fails the build when a patch does not apply: proven by
 * install-fails-when-a-patch-does-not-apply.test.ts), install scripts being off.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8')
/** Each stage's text by name (`FROM ... AS name`), joined continuation lines. */
const stages = new Map(
  dockerfile
    .replaceAll('\\\n', ' ')
    .split(/^(?=FROM )/m)
    .filter((s) => s.startsWith('FROM '))
    .map((s) => [/^FROM \S+ AS (\S+)/.exec(s)?.[1] ?? '', s] as const),
)
const lastStage = [...stages.keys()].at(-1)
const installOf = (stage: string) => stages.get(stage)?.split('\n').find((l) => l.startsWith('RUN npm ci'))
const selectedBy = (install: string | undefined) => [...(install ?? '').matchAll(/-w (\S+)/g)].map((m) => m[1] as string).sort()
/** What `npm ci` installs for the stage's selection (workspaces, and the root's own dependencies with --include-workspace-root). */
const treeOf = (stage: string) => {
  const install = installOf(stage) ?? ''
  const flags = [...(install.includes('--include-workspace-root') ? ['--include-workspace-root'] : []), ...selectedBy(install).flatMap((w) => ['-w', w])]
  return execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable', ...flags], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
}
const rootPackage = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>
  dependencies?: Record<string, string>
}

describe('Dockerfile', () => {
  it('builds the production image by default, from the deployed workspaces only, without the simulators', () => {
    expect(lastStage).toBe('production')
    const install = installOf('production')
    expect(install).toContain('--omit=dev')
    const selected = selectedBy(install)
    expect(selected).toEqual(['libs', 'schemas', 'services'])
    for (const stage of ['base', 'production']) expect(stages.get(stage), stage).not.toMatch(/COPY simulators|-w simulators/)
    const tree = treeOf('production')
    expect(tree).toMatch(/node_modules\/@platformatic\/kafka$/m)
    for (const tooling of ['kafkajs', 'testcontainers', 'playwright-core', 'vitest', 'eslint', 'typescript', 'fast-check']) {
      expect(tree, tooling).not.toMatch(new RegExp(`node_modules/${tooling}$`, 'm'))
    }
    // A numeric user, so Kubernetes' runAsNonRoot can check it.
    expect(stages.get('production')).toMatch(/^USER 1000:1000$/m)
  })

  it('has a demo target with the simulators for docker-compose', () => {
    expect(stages.get('demo')).toContain('COPY simulators simulators')
    expect(selectedBy(installOf('demo'))).toEqual(['libs', 'schemas', 'services', 'simulators'])
    const compose = readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8')
    expect(compose).toMatch(/target: demo/)
  })

  it('applies the patches/ files with the root postinstall in both targets, patch-package installed there', () => {
    // Without the folder patch-package finds no patch file and succeeds: the image would run unpatched.
    expect(stages.get('base')).toMatch(/^COPY patches\/? patches\/?$/m)
    const patches = readdirSync(new URL('../patches/', import.meta.url)).filter((f) => f.endsWith('.patch'))
    expect(patches.length).toBeGreaterThan(0)
    expect(rootPackage.scripts.postinstall).toMatch(/^patch-package( --error-on-(fail|warn)){2}$/)
    expect(rootPackage.scripts.postinstall).toContain('--error-on-fail')
    expect(rootPackage.scripts.postinstall).toContain('--error-on-warn')
    // The images leave dev dependencies out.
    expect(Object.keys(rootPackage.dependencies ?? {})).toContain('patch-package')
    for (const stage of ['demo', 'production']) {
      const install = installOf(stage)
      // Install scripts are off, so the postinstall is run by name, after the install.
      expect(install, stage).toContain('--ignore-scripts')
      expect(install, stage).toMatch(/^RUN npm ci [^&]*--include-workspace-root[^&]*&&\s+npm run postinstall\s+&&/)
      const tree = treeOf(stage)
      expect(tree, stage).toMatch(/node_modules\/patch-package$/m)
      // patch-package fails on a patch whose package is not installed: each is in the image.
      for (const patch of patches) {
        const name = patch.slice(0, -'.patch'.length).split('+').slice(0, -1).join('/')
        expect(tree, `${stage}: ${name}`).toMatch(new RegExp(`node_modules/${name}$`, 'm'))
      }
    }
  })
})
