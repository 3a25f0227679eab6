import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const childService = fileURLToPath(new URL('./child-service.ts', import.meta.url))

/** Whether a process (not ours to wait for: a grandchild) still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe("npm start's child processes", () => {
  it('stop through their own SIGTERM shutdown when npm start is killed with SIGKILL', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tep-exit-with-parent-'))
    const stoppedFile = path.join(dir, 'stopped')
    // A "service" with a shutdown of its own: it records that it ran, then exits.
    const service = path.join(dir, 'service.ts')
    writeFileSync(
      service,
      `import { writeFileSync } from 'node:fs'
setInterval(() => {}, 1000)
process.on('SIGTERM', () => { writeFileSync(${JSON.stringify(stoppedFile)}, 'graceful'); process.exit(0) })
process.stdout.write('service up\\n')
`,
    )
    // A stand-in for npm start: spawns the service as npm start does and prints its pid.
    const parent = path.join(dir, 'parent.ts')
    writeFileSync(
      parent,
      `import { spawnService } from ${JSON.stringify(childService)}
const s = spawnService({ name: 'svc', script: ${JSON.stringify(service)}, env: process.env, logDir: ${JSON.stringify(dir)}, cwd: ${JSON.stringify(dir)} })
process.stdout.write(String(s.child.pid) + '\\n')
setInterval(() => {}, 1000)
`,
    )
    const p = spawn(process.execPath, [parent], { stdio: ['ignore', 'pipe', 'inherit'] })
    const [line] = (await once(p.stdout!, 'data')) as [Buffer]
    const pid = Number(line.toString().trim())
    expect(pid).toBeGreaterThan(0)
    await until('the service to start', () => existsSync(path.join(dir, 'svc.log')) && readFileSync(path.join(dir, 'svc.log'), 'utf8').includes('service up'))
    expect(alive(pid)).toBe(true)

    p.kill('SIGKILL')
    await once(p, 'exit')
    try {
      await until('the orphaned service to stop', () => !alive(pid))
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL') // never leave the orphan behind, pass or fail
    }
    expect(readFileSync(stoppedFile, 'utf8')).toBe('graceful')
  })
  it('get one stop signal on Ctrl-C, from npm start, not a second one from the terminal that would cut their shutdown short', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tep-exit-with-parent-'))
    const signalsFile = path.join(dir, 'signals')
    const service = path.join(dir, 'service.ts')
    writeFileSync(
      service,
      `import { appendFileSync } from 'node:fs'
setInterval(() => {}, 1000)
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { appendFileSync(${JSON.stringify(signalsFile)}, sig + '\\n'); setTimeout(() => process.exit(0), 300) })
process.stdout.write('service up\\n')
`,
    )
    // npm start's own Ctrl-C handling: stop every child (SIGTERM), then exit.
    const parent = path.join(dir, 'parent.ts')
    writeFileSync(
      parent,
      `import { spawnService } from ${JSON.stringify(childService)}
const s = spawnService({ name: 'svc', script: ${JSON.stringify(service)}, env: process.env, logDir: ${JSON.stringify(dir)}, cwd: ${JSON.stringify(dir)} })
process.on('SIGINT', () => { void s.stop().then(() => process.exit(0)) })
process.stdout.write(String(s.child.pid) + '\\n')
setInterval(() => {}, 1000)
`,
    )
    // Its own process group, as a terminal's foreground job: Ctrl-C signals the whole group.
    const p = spawn(process.execPath, [parent], { stdio: ['ignore', 'pipe', 'inherit'], detached: true })
    const [line] = (await once(p.stdout!, 'data')) as [Buffer]
    const pid = Number(line.toString().trim())
    await until('the service to start', () => existsSync(path.join(dir, 'svc.log')) && readFileSync(path.join(dir, 'svc.log'), 'utf8').includes('service up'))
    try {
      process.kill(-p.pid!, 'SIGINT')
      await once(p, 'exit')
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL')
    }
    expect(readFileSync(signalsFile, 'utf8').trim().split('\n')).toEqual(['SIGTERM'])
  })
})
