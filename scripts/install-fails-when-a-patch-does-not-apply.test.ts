/**
 * The root's postinstall applies patches/*.patch with patch-package, and an install must
 * fail, loudly, when a patch does not apply or was made for another version (the string
 * replacement it replaced only warned and went on unpatched). Each case runs the root's
 * own postinstall command with `npm run` in a throwaway app: the repository's patches/,
 * copies of the installed (patched) files each patch touches and their package.json, and
 * the repository's patch-package linked in. Outside CI and with NODE_ENV=development,
 * where patch-package on its own would print the error and exit 0: only the flags of the
 * command make these cases fail.
 */
import { spawnSync } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const postinstall = (
  JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts.postinstall

interface PatchFile {
  file: string
  name: string
  version: string
  /** Each file the patch changes (relative to the app), with the first line the patch adds to it. */
  targets: Map<string, string>
}

/** patches/<scope>+<name>+<version>.patch, as patch-package names them. */
const patches: PatchFile[] = readdirSync(path.join(root, 'patches'))
  .filter((file) => file.endsWith('.patch'))
  .map((file) => {
    const parts = file.slice(0, -'.patch'.length).split('+')
    const targets = new Map<string, string>()
    let current: string | undefined
    for (const line of readFileSync(path.join(root, 'patches', file), 'utf8').split('\n')) {
      const header = /^diff --git a\/(\S+) b\//.exec(line)
      if (header) current = header[1]
      else if (
        current !== undefined &&
        line.startsWith('+') &&
        !line.startsWith('+++') &&
        !targets.has(current)
      )
        targets.set(current, line.slice(1))
    }
    return { file, name: parts.slice(0, -1).join('/'), version: parts.at(-1)!, targets }
  })

const apps: string[] = []
afterEach(() => {
  for (const app of apps.splice(0)) rmSync(app, { recursive: true, force: true })
})

/** An app holding what the patches touch, as `npm ci` left it in this repository. */
function fakeApp(): string {
  const app = mkdtempSync(path.join(tmpdir(), 'tep-patches-'))
  apps.push(app)
  writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'patch-check', private: true, scripts: { postinstall } }),
  )
  cpSync(path.join(root, 'patches'), path.join(app, 'patches'), { recursive: true })
  for (const patch of patches) {
    for (const file of [`node_modules/${patch.name}/package.json`, ...patch.targets.keys()]) {
      mkdirSync(path.dirname(path.join(app, file)), { recursive: true })
      cpSync(path.join(root, file), path.join(app, file))
    }
  }
  mkdirSync(path.join(app, 'node_modules', '.bin'), { recursive: true })
  symlinkSync(
    path.join(root, 'node_modules', 'patch-package'),
    path.join(app, 'node_modules', 'patch-package'),
  )
  symlinkSync('../patch-package/index.js', path.join(app, 'node_modules', '.bin', 'patch-package'))
  return app
}

function runPostinstall(app: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'development', FORCE_COLOR: '0' }
  for (const name of ['CI', 'CONTINUOUS_INTEGRATION', 'BUILD_NUMBER', 'RUN_ID']) delete env[name]
  const run = spawnSync('npm', ['run', 'postinstall'], { cwd: app, env, encoding: 'utf8' })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

function edit(app: string, file: string, change: (text: string) => string) {
  const at = path.join(app, file)
  const before = readFileSync(at, 'utf8')
  const after = change(before)
  expect(after, `${file} unchanged`).not.toBe(before)
  writeFileSync(at, after)
}

describe('the root postinstall (patch-package)', () => {
  it('finds a patch per package, each changing at least one file', () => {
    expect(patches.map((p) => p.name).sort()).toEqual([
      '@platformatic/dynamic-buffer',
      '@platformatic/kafka',
      'avsc',
    ])
    for (const patch of patches) expect(patch.targets.size, patch.file).toBeGreaterThan(0)
  })

  it('succeeds on the tree `npm ci` patched, naming each package it applied', () => {
    const { status, output } = runPostinstall(fakeApp())
    expect(status, output).toBe(0)
    for (const patch of patches) expect(output).toContain(`${patch.name}@${patch.version} ✔`)
  })

  for (const patch of patches) {
    for (const [file, added] of patch.targets) {
      it(`fails naming ${patch.file} when ${file} no longer has the lines it patches`, () => {
        const app = fakeApp()
        edit(app, file, (text) => text.replace(added, '/* changed upstream */'))
        const { status, output } = runPostinstall(app)
        expect(status, output).not.toBe(0)
        expect(output).toContain(`Failed to apply patch for package ${patch.name}`)
        expect(output).toContain(`patches/${patch.file}`)
      })
    }
  }

  it('fails when the installed version is not the one a patch was made for, even if it applies', () => {
    const app = fakeApp()
    const patch = patches.find((p) => p.name === 'avsc')!
    edit(app, `node_modules/${patch.name}/package.json`, (text) =>
      text.replace(`"version": "${patch.version}"`, '"version": "5.7.10"'),
    )
    const { status, output } = runPostinstall(app)
    expect(status, output).not.toBe(0)
    expect(output).toContain('version mismatch')
    expect(output).toMatch(/avsc@.*5\.7\.10/)
  })
})
