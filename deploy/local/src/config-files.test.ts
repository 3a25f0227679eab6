import { describe, expect, it } from 'vitest'
import { replicationFor, serverProperties } from './config-files.ts'

function props(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  )
}

describe('serverProperties', () => {
  it('keeps a single node at replication factor 1 and min ISR 1, internal topics too', () => {
    const p = props(serverProperties({ kafkaPort: 9092, controllerPort: 9093, dataDir: '/d' }))
    expect(p.get('node.id')).toBe('1')
    expect(p.get('controller.quorum.voters')).toBe('1@127.0.0.1:9093')
    for (const key of ['default.replication.factor', 'offsets.topic.replication.factor', 'transaction.state.log.replication.factor'])
      expect(p.get(key), key).toBe('1')
    expect(p.get('min.insync.replicas')).toBe('1')
    expect(p.get('transaction.state.log.min.isr')).toBe('1')
  })

  it('configures a node of a three-node cluster as production clusters are: RF 3, min ISR 2, no unclean election', () => {
    const voters = [
      { nodeId: 1, controllerPort: 7001 },
      { nodeId: 2, controllerPort: 7002 },
      { nodeId: 3, controllerPort: 7003 },
    ]
    const p = props(serverProperties({ nodeId: 2, kafkaPort: 9094, controllerPort: 7002, dataDir: '/d2', voters }))
    expect(p.get('node.id')).toBe('2')
    expect(p.get('process.roles')).toBe('broker,controller')
    expect(p.get('controller.quorum.voters')).toBe('1@127.0.0.1:7001,2@127.0.0.1:7002,3@127.0.0.1:7003')
    expect(p.get('listeners')).toBe('PLAINTEXT://127.0.0.1:9094,CONTROLLER://127.0.0.1:7002')
    expect(p.get('advertised.listeners')).toBe('PLAINTEXT://127.0.0.1:9094')
    for (const key of ['default.replication.factor', 'offsets.topic.replication.factor', 'transaction.state.log.replication.factor'])
      expect(p.get(key), key).toBe('3')
    expect(p.get('min.insync.replicas')).toBe('2')
    expect(p.get('transaction.state.log.min.isr')).toBe('2')
    expect(p.get('unclean.leader.election.enable')).toBe('false')
    expect(p.get('log.dirs')).toBe('/d2')
  })
})

describe('replicationFor', () => {
  it('caps the replication factor at 3 and asks for 2 in-sync replicas from 3 nodes on', () => {
    expect(replicationFor(1)).toEqual({ replicationFactor: 1, minInsyncReplicas: 1 })
    expect(replicationFor(2)).toEqual({ replicationFactor: 2, minInsyncReplicas: 1 })
    expect(replicationFor(3)).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 })
    expect(replicationFor(5)).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 })
  })
})
