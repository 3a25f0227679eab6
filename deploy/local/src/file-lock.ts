import { mkdir, open, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { isProcessRunning } from './process-control.ts'

export interface FileLock {
  release(): Promise<void>
}

export interface AcquireLockOptions {
  /** How long to wait for another holder before giving up. */
  timeoutMs: number
  /** Called once when we start waiting for someone else's lock. */
  onWait?: (holderPid: number) => void
}

/**
 * An exclusive lock file holding the owner's pid (`open(..., 'wx')` is atomic).
 * A lock whose owner is gone is stale and taken over, so a fetch killed half-way
 * never blocks the next one. Waiting is a poll because there is no event for
 * "another process deleted a file" that works everywhere.
 */
export async function acquireLock(file: string, options: AcquireLockOptions): Promise<FileLock> {
  await mkdir(path.dirname(file), { recursive: true })
  const deadline = Date.now() + options.timeoutMs
  let announced = false
  let emptySince: number | undefined
  for (;;) {
    try {
      const handle = await open(file, 'wx')
      await handle.writeFile(String(process.pid))
      await handle.close()
      return { release: () => rm(file, { force: true }) }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim())
    if (!Number.isInteger(holder) || holder <= 0) {
      // Being written this very moment, or left empty by an owner that died between
      // create and write: give it a few seconds before treating it as stale.
      emptySince ??= Date.now()
      if (Date.now() - emptySince > 5_000) await rm(file, { force: true })
      await new Promise((r) => setTimeout(r, 50))
      continue
    }
    emptySince = undefined
    if (!isProcessRunning(holder)) {
      await rm(file, { force: true })
      continue
    }
    if (!announced) {
      options.onWait?.(holder)
      announced = true
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for lock ${file} held by pid ${holder}`,
      )
    }
    await new Promise((r) => setTimeout(r, 500))
  }
}
