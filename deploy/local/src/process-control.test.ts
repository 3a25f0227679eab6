import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { terminateChild } from './process-control.ts'

describe('terminateChild with no grace', () => {
  it('ends a child that ignores SIGTERM with SIGKILL, and resolves on its exit', async () => {
    // A shell that traps SIGTERM: a graceful stop would wait out its grace period.
    const child = spawn('sh', ['-c', 'trap "" TERM; while :; do sleep 1; done'], { stdio: 'ignore' })
    await new Promise((r) => child.once('spawn', r))
    await terminateChild(child, 0)
    expect(child.signalCode).toBe('SIGKILL')
    // A second call on the ended child is a no-op.
    await terminateChild(child, 0)
  })
})
