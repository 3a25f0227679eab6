import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { REFRESHER_MALLOC_ENV, refresherMallocEnv } from './runtime.ts'

const root = new URL('../../../', import.meta.url)
const read = (file: string): string => readFileSync(new URL(file, root), 'utf8')

describe("the refresher's allocator setting (issue 35)", () => {
  it('is a 64 KiB mmap threshold, and an operator-set value is kept', () => {
    expect(REFRESHER_MALLOC_ENV).toEqual({ MALLOC_MMAP_THRESHOLD_: '65536' })
    expect(refresherMallocEnv({})).toEqual({ MALLOC_MMAP_THRESHOLD_: '65536' })
    expect(refresherMallocEnv({ MALLOC_MMAP_THRESHOLD_: '131072', PATH: '/bin' })).toEqual({
      MALLOC_MMAP_THRESHOLD_: '131072',
    })
  })

  it('is set wherever the refresher is started: compose, k8s, the podman example, npm start, the faults harness', () => {
    // The compose service's block: from `refresher:` to the next service.
    const compose = /\n {2}refresher:\n([\s\S]*?)\n {2}\S/.exec(read('docker-compose.yml'))?.[1] ?? ''
    expect(compose).toMatch(/\n\s+MALLOC_MMAP_THRESHOLD_: '65536'\n/)
    expect(read('deploy/k8s/refresher.yaml')).toContain('- { name: MALLOC_MMAP_THRESHOLD_, value: "65536" }')
    expect(read('deploy/README.md')).toMatch(/--name refresher [^\n]*-e MALLOC_MMAP_THRESHOLD_=65536 \\\n\s+tep:[^\n]* services\/refresher\/src\/main\.ts/)
    expect(read('scripts/start.ts')).toMatch(/name: 'refresher', script: 'services\/refresher\/src\/main\.ts', env: \{ \.\.\.refresherMallocEnv\(process\.env\)/)
    expect(read('tools/faults/src/system.ts')).toMatch(/this\.add\('refresher', [^\n]*\.\.\.refresherMallocEnv\(process\.env\)/)
  })
})
