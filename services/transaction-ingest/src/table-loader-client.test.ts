import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { describe, expect, it } from 'vitest'
import { loadInChildProcess } from './table-loader-client.ts'

const handOverDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('tep-table-'))

describe('loadInChildProcess', () => {
  it('fails the start with the loader\'s signal when the loader dies before handing over, and leaves no FIFO behind', async () => {
    const before = new Set(handOverDirs())
    const load = loadInChildProcess({
      // Never reached: the loader is killed as soon as it exists, before it opens its end of the FIFO.
      loader: { brokers: ['127.0.0.1:9'], clientId: 'loader-test', registryUrl: 'http://127.0.0.1:9' },
      shopsTopic: 'shops',
      merchantsTopic: 'merchants',
      onSkipped: () => {},
      onChild: (child) => child?.kill('SIGKILL'),
      stopped: () => false,
    })
    // The service's own open of the FIFO was waiting for a writer: it must not keep the start hanging.
    await expect(load).rejects.toThrow('the table loader process exited (SIGKILL) before handing over the table')
    expect(handOverDirs().filter((d) => !before.has(d))).toEqual([])
  })

  it('hands over nothing, and is no error, when the caller stopped and the loader was ended for it', async () => {
    const load = loadInChildProcess({
      loader: { brokers: ['127.0.0.1:9'], clientId: 'loader-test', registryUrl: 'http://127.0.0.1:9' },
      shopsTopic: 'shops',
      merchantsTopic: 'merchants',
      onSkipped: () => {},
      onChild: (child) => child?.kill('SIGTERM'),
      stopped: () => true,
    })
    await expect(load).resolves.toBeUndefined()
  })
})
