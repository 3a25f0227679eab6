import type { Consumer, Producer } from '@platformatic/kafka'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { InputMessage } from './input-message.ts'

// The request itself and the connection are faked: what is under test is which broker the retry goes to.
const sent: string[] = []
let answers: Array<Error | undefined> = []
vi.mock('@platformatic/kafka', async (original) => {
  const actual = await original<typeof import('@platformatic/kafka')>()
  return {
    ...actual,
    txnOffsetCommitV3: {
      api: {
        async: async (conn: { address: string }) => {
          sent.push(conn.address)
          const answer = answers.shift()
          if (answer !== undefined) throw answer
          return {}
        },
      },
    },
  }
})
vi.mock('./connection.ts', async (original) => {
  const actual = await original<typeof import('./connection.ts')>()
  return {
    ...actual,
    bareConnection: () => {
      const conn = {
        address: '',
        async connect(host: string, port: number) {
          conn.address = `${host}:${port}`
        },
        isConnected: () => true,
        close: async () => undefined,
      }
      return conn
    },
  }
})
const { TxnOffsetCommitter } = await import('./txn-offset-commit.ts')

const brokers = new Map([
  [1, { host: '10.0.0.1', port: 9092 }],
  [2, { host: '10.0.0.2', port: 9092 }],
])
/** A consumer whose heartbeats have already found the group's new coordinator, broker 2. */
const consumer = { metadata: async () => ({ brokers }), findGroupCoordinator: async () => 2 } as unknown as Consumer
const producer = { producerId: 7n, producerEpoch: 0 } as unknown as Producer
/** A record fetched while broker 1 coordinated the group. */
const record = { topic: 'raw', partition: 0, offset: 41n, consumer: { groupId: 'g', generationId: 3, memberId: 'm', coordinatorId: 1 } } as unknown as InputMessage
const refused = () => Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:9092'), { code: 'ECONNREFUSED' })

describe('TxnOffsetCommitter', () => {
  beforeEach(() => {
    sent.length = 0
  })

  it('asks the consumer for the group coordinator when the one the records name does not answer (a killed broker)', async () => {
    answers = [refused(), undefined]
    await new TxnOffsetCommitter({ brokers: [], clientId: 't' }).commit(producer, consumer, 'txn', [record])
    expect(sent).toEqual(['10.0.0.1:9092', '10.0.0.2:9092'])
  })

  it('asks again when the named coordinator has left the cluster metadata (fenced by the controller)', async () => {
    answers = [undefined]
    const gone = { ...record, consumer: { ...record.consumer, coordinatorId: 3 } } as unknown as InputMessage
    await new TxnOffsetCommitter({ brokers: [], clientId: 't' }).commit(producer, consumer, 'txn', [gone])
    expect(sent).toEqual(['10.0.0.2:9092'])
  })
})
