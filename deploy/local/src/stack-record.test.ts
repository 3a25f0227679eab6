import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isProcessRunning } from './process-control.ts'
import {
  reapOrphanedStacks,
  stackMarker,
  stopRecordedStack,
  writeRecord,
  type StackRecord,
} from './stack-record.ts'

// Stand-ins for the JVMs: node processes whose command lines carry (or lack) the marker.
const children: ChildProcess[] = []
function idle(args: string[]): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', ...args], {
    stdio: 'ignore',
  })
  children.push(child)
  return child
}
function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()))
}

async function recordFor(stateDir: string, kafkaPid: number, registryPid: number, ownerPid: number | null) {
  const record: StackRecord = {
    version: 1,
    stateDir,
    ports: { kafka: 1, controller: 2, registry: 3, registryManagement: 4 },
    brokers: ['127.0.0.1:1'],
    registryUrl: 'http://127.0.0.1:3/apis/ccompat/v7',
    kafkaPid,
    registryPid,
    ownerPid,
    startedAt: new Date().toISOString(),
  }
  await writeRecord(record)
}

afterEach(async () => {
  for (const c of children.splice(0)) {
    c.kill('SIGKILL')
    await exited(c)
  }
})

describe('stopRecordedStack', () => {
  it('stops the recorded processes that carry the marker of this state dir', async () => {
    const stateDir = await mkdtemp(path.join(os.tmpdir(), 'record-'))
    const kafka = idle([stackMarker(stateDir), 'kafka.Kafka'])
    const registry = idle([stackMarker(stateDir), '-jar', 'quarkus-run.jar'])
    await recordFor(stateDir, kafka.pid!, registry.pid!, null)

    const report = await stopRecordedStack(stateDir, 5_000)

    await Promise.all([exited(kafka), exited(registry)])
    expect(report.stopped.map((s) => s.role).sort()).toEqual(['kafka', 'registry'])
    expect(report.skipped).toEqual([])
    expect(existsSync(stateDir)).toBe(false)
  })

  it('leaves alone a recorded pid that is another program or another stack (pid reuse, a dev stack)', async () => {
    const stateDir = await mkdtemp(path.join(os.tmpdir(), 'record-'))
    const stranger = idle(['kafka.Kafka']) // right main class, no marker
    const otherStack = idle([stackMarker('/somewhere/else'), '-jar', 'quarkus-run.jar'])
    await recordFor(stateDir, stranger.pid!, otherStack.pid!, null)

    const report = await stopRecordedStack(stateDir, 5_000)

    expect(report.stopped).toEqual([])
    expect(report.skipped.map((s) => s.pid).sort()).toEqual([stranger.pid, otherStack.pid].sort())
    expect(isProcessRunning(stranger.pid!)).toBe(true)
    expect(isProcessRunning(otherStack.pid!)).toBe(true)
  })

  it('is a no-op on a state dir that does not exist', async () => {
    const report = await stopRecordedStack(path.join(os.tmpdir(), 'no-such-stack-dir-' + process.pid))
    expect(report).toEqual({ stopped: [], skipped: [] })
  })
})

describe('reapOrphanedStacks', () => {
  it('stops stacks whose owner died and keeps those whose owner lives or that have none', async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'reap-'))
    try {
      const deadOwner = idle([])
      const deadOwnerPid = deadOwner.pid!
      deadOwner.kill('SIGKILL')
      await exited(deadOwner)

      const orphanDir = path.join(parent, 'st-orphan')
      const ownedDir = path.join(parent, 'st-owned')
      const detachedDir = path.join(parent, 'st-detached')
      const orphan = idle([stackMarker(orphanDir), 'kafka.Kafka'])
      const owned = idle([stackMarker(ownedDir), 'kafka.Kafka'])
      const detached = idle([stackMarker(detachedDir), 'kafka.Kafka'])
      for (const d of [orphanDir, ownedDir, detachedDir]) await mkdir(d)
      await recordFor(orphanDir, orphan.pid!, -1, deadOwnerPid)
      await recordFor(ownedDir, owned.pid!, -1, process.pid)
      await recordFor(detachedDir, detached.pid!, -1, null)

      expect(await reapOrphanedStacks(parent, 'st-')).toEqual([orphanDir])
      await exited(orphan)
      expect(isProcessRunning(owned.pid!)).toBe(true)
      expect(isProcessRunning(detached.pid!)).toBe(true)
    } finally {
      await rm(parent, { recursive: true, force: true })
    }
  })
})
