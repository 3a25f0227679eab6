import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { acquireLock } from './file-lock.ts'

describe('acquireLock', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'file-lock-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('makes a second holder wait until the first releases', async () => {
    const file = path.join(dir, 'a.lock')
    const first = await acquireLock(file, { timeoutMs: 5_000 })
    const order: string[] = []
    const second = await acquireLock(file, {
      timeoutMs: 5_000,
      // Called once the second attempt has seen the lock held: the moment to let go.
      onWait: (holder) => {
        order.push(`second waits for ${holder}`)
        void first.release().then(() => order.push('first released'))
      },
    })
    order.push('second acquired')
    expect(order).toEqual([`second waits for ${process.pid}`, 'first released', 'second acquired'])
    expect(await readFile(file, 'utf8')).toBe(String(process.pid))
    await second.release()
  })

  it('takes over a lock whose owner is dead', async () => {
    const file = path.join(dir, 'b.lock')
    // The pid of a process that has certainly exited.
    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString()
    await writeFile(file, dead)
    const lock = await acquireLock(file, { timeoutMs: 2_000 })
    expect(await readFile(file, 'utf8')).toBe(String(process.pid))
    await lock.release()
  })

  it('gives up after the timeout while a live process holds it', async () => {
    const file = path.join(dir, 'c.lock')
    const held = await acquireLock(file, { timeoutMs: 1_000 })
    await expect(acquireLock(file, { timeoutMs: 600 })).rejects.toThrow(`held by pid ${process.pid}`)
    await held.release()
  })
})
