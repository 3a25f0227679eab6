/**
 * Static checks of the Dockerfile (no Docker engine on these machines): the
 * production image (the default, last target) installs production dependencies of
 * the deployed workspaces only (the dependency tree npm would install for exactly
 * that selection holds no test tooling) and holds no simulators; the demo target
 * adds them for docker-compose; both apply the project's @platformatic/kafka patch
 * explicitly, failing the build if it did not take.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
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

describe('Dockerfile', () => {
  it('builds the production image by default, from the deployed workspaces only, without the simulators', () => {
    expect(lastStage).toBe('production')
    const install = installOf('production')
    expect(install).toContain('--omit=dev')
    const selected = selectedBy(install)
    expect(selected).toEqual(['libs', 'schemas', 'services'])
    for (const stage of ['base', 'production']) expect(stages.get(stage), stage).not.toMatch(/COPY simulators|-w simulators/)
    const tree = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable', ...selected.flatMap((w) => ['-w', w])], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
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

  it('applies the @platformatic/kafka patches in both targets and fails the build when one did not take', () => {
    expect(stages.get('base')).toContain('scripts/patch-platformatic-kafka.mjs')
    const patch = readFileSync(new URL('./patch-platformatic-kafka.mjs', import.meta.url), 'utf8')
    const marks = [
      [/const MARK = '\/\* (tep-patch: [^*]+) \*\/'/, 'node_modules/@platformatic/kafka/dist/clients/consumer/consumer.js'],
      [/const DB_MARK = '\/\* (tep-patch: [^*]+) \*\/'/, 'node_modules/@platformatic/dynamic-buffer/dist/index.js'],
      [/const REC_MARK = '\/\* (tep-patch: [^*]+) \*\/'/, 'node_modules/@platformatic/kafka/dist/protocol/records.js'],
      [/const AVSC_MARK = '\/\* (tep-patch: [^*]+) \*\/'/, 'node_modules/avsc/lib/utils.js'],
      [/const TXN_MARK = '\/\* (tep-patch: [^*]+) \*\/'/, 'node_modules/@platformatic/kafka/dist/clients/producer/transaction.js'],
    ] as const
    for (const [pattern, file] of marks) {
      const mark = pattern.exec(patch)?.[1]
      expect(mark, file).toBeDefined()
      for (const stage of ['demo', 'production']) {
        const install = installOf(stage)
        expect(install, stage).toContain('node scripts/patch-platformatic-kafka.mjs')
        expect(install, stage).toContain(`grep -qF '${mark!.trim()}' ${file}`)
      }
    }
  })
})
