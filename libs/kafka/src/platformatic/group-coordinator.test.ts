import { describe, expect, it, vi } from 'vitest'
import type { KafkaConnection } from './connection.ts'
import { liveGroupCoordinator, type AskCoordinator } from './group-coordinator.ts'

const brokers = new Map([
  [2, { host: 'b2', port: 9092 }],
  [3, { host: 'b3', port: 9092 }],
])
/** A consumer whose cached coordinator is `cached`, in a cluster of brokers 2 and 3. */
const consumer = (cached: number) => ({
  groupId: 'g',
  findGroupCoordinator: vi.fn(async () => cached),
  metadata: vi.fn(async () => ({ brokers })),
})
const connection = { clientId: 'test' } as KafkaConnection

describe('liveGroupCoordinator', () => {
  it("takes the consumer's coordinator while its broker is in the metadata, asking nobody", async () => {
    const ask = vi.fn<AskCoordinator>()
    expect(await liveGroupCoordinator(consumer(3) as never, connection, ask)).toEqual({ nodeId: 3, host: 'b3', port: 9092 })
    expect(ask).not.toHaveBeenCalled()
  })

  it('asks the live brokers when the cached coordinator left the metadata (a killed broker), the first to name a live one wins', async () => {
    // Broker 2 does not answer, broker 3 names itself.
    const ask = vi.fn<AskCoordinator>(async (b) => {
      if (b.host === 'b2') throw new Error('connect ECONNREFUSED')
      return 3
    })
    expect(await liveGroupCoordinator(consumer(1) as never, connection, ask)).toEqual({ nodeId: 3, host: 'b3', port: 9092 })
    expect(ask).toHaveBeenCalledWith({ host: 'b3', port: 9092 }, 'g')
  })

  it('throws, with what each broker said, while none names a live coordinator (an election in progress)', async () => {
    const ask = vi.fn<AskCoordinator>(async (b) => (b.host === 'b2' ? 1 : undefined))
    await expect(liveGroupCoordinator(consumer(1) as never, connection, ask)).rejects.toThrow(
      'group coordinator 1 is not in the cluster metadata, and no live broker named another (broker 2 named 1; broker 3 named none)',
    )
  })
})
