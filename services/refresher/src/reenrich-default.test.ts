import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '@tep/config'
import { describe, expect, it } from 'vitest'
import { refresherEnv } from './config.ts'

const root = new URL('../../../', import.meta.url)

/** Every file below `dir`, relative to the repository (overlays sit in subfolders, e.g. deploy/k8s/dev-plaintext/). */
function filesUnder(dir: string): string[] {
  const base = fileURLToPath(root)
  return readdirSync(new URL(dir, root), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(base, path.join(e.parentPath, e.name)))
}

describe('handle invalidations are acted on by default (issue 33)', () => {
  it('REENRICH_HANDLES defaults to true, within a 24 h read of the enriched topic and 10,000 findBy per run', () => {
    const cfg = loadConfig('refresher', refresherEnv, {})
    expect(cfg.REENRICH_HANDLES).toBe(true)
    expect(cfg.REENRICH_WINDOW).toBe(86_400_000)
    expect(cfg.REENRICH_MAX_PER_RUN).toBe(10_000)
    expect(loadConfig('refresher', refresherEnv, { REENRICH_HANDLES: 'false' }).REENRICH_HANDLES).toBe(false)
  })

  it('neither docker-compose.yml, deploy/k8s nor npm start turns it off', () => {
    const files = [
      'docker-compose.yml',
      'scripts/start.ts',
      ...filesUnder('deploy/k8s/'),
      ...filesUnder('scripts/start/'),
    ]
    expect(files).toContain('deploy/k8s/dev-plaintext/config.yaml')
    const offenders = files.filter((f) =>
      /REENRICH_HANDLES["']?\s*[:=]\s*["']?(false|0)\b/i.test(readFileSync(new URL(f, root), 'utf8')),
    )
    expect(offenders).toEqual([])
  })
})
