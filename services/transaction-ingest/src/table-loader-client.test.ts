import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import type { ChildProcess } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { loadInChildProcesses } from './table-loader-client.ts'

const handOverDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('tep-table-'))

/** A load whose loader is signalled as soon as it exists, before it opens its end of the FIFO (the cluster is never reached). */
function loadKilled(signal: NodeJS.Signals, stopped: boolean) {
  return loadInChildProcesses({
    loader: { brokers: ['127.0.0.1:9'], clientId: 'loader-test', registryUrl: 'http://127.0.0.1:9' },
    shopsTopic: 'shops',
    merchantsTopic: 'merchants',
    onSkipped: () => {},
    onChild: (child: ChildProcess, running: boolean) => running && child.kill(signal),
    stopped: () => stopped,
  })
}

describe('loadInChildProcesses', () => {
  it("fails the start with the loader's signal when the loader dies before handing over, and leaves no FIFO behind", async () => {
    const before = new Set(handOverDirs())
    // The service's own open of the FIFO was waiting for a writer: it must not keep the start hanging.
    await expect(loadKilled('SIGKILL', false)).rejects.toThrow('the table loader process exited (SIGKILL) before handing over the table')
    expect(handOverDirs().filter((d) => !before.has(d))).toEqual([])
  })

  it('hands over nothing, and is no error, when the caller stopped and the loader was ended for it', async () => {
    await expect(loadKilled('SIGTERM', true)).resolves.toBeUndefined()
  })

  it('ends the other loaders when one dies, and fails with that one\'s exit', async () => {
    const children: ChildProcess[] = []
    const exited: Array<Promise<unknown>> = []
    const load = loadInChildProcesses({
      // Unreachable: each loader would retry for ever, so only the kill of the others ends them.
      loader: { brokers: ['127.0.0.1:9'], clientId: 'loader-test', registryUrl: 'http://127.0.0.1:9' },
      shopsTopic: 'shops',
      merchantsTopic: 'merchants',
      shares: [[{ topic: 'shops', partition: 0 }], [{ topic: 'shops', partition: 1 }], [{ topic: 'merchants', partition: 0 }]],
      onSkipped: () => {},
      onChild: (child, running) => {
        if (!running) return
        children.push(child)
        exited.push(new Promise((resolve) => child.once('exit', resolve)))
        if (children.length === 2) child.kill('SIGKILL')
      },
      stopped: () => false,
    })
    await expect(load).rejects.toThrow('the table loader process exited (SIGKILL) before handing over the table')
    expect(children).toHaveLength(3)
    await Promise.all(exited)
    expect(children.map((c) => c.exitCode !== null || c.signalCode !== null)).toEqual([true, true, true])
  })
})
