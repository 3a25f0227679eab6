import { describe, expect, it } from 'vitest'
import { KafkaConfigError } from './errors.ts'
import { minInsyncFor, replicationFindings, topicReplicationFromEnv } from './topic-replication.ts'

describe('topicReplicationFromEnv', () => {
  it("defaults to the broker's replication factor and refuses under-replicated topics", () => {
    expect(topicReplicationFromEnv({})).toEqual({ replicationFactor: -1, underReplicated: 'refuse' })
  })

  it('reads every variable', () => {
    expect(
      topicReplicationFromEnv({ KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2', KAFKA_ALLOW_UNDER_REPLICATED_TOPICS: 'true' }),
    ).toEqual({ replicationFactor: 3, minInsyncReplicas: 2, underReplicated: 'warn' })
  })

  it('names every bad variable at once', () => {
    const error = (() => {
      try {
        topicReplicationFromEnv({ KAFKA_REPLICATION_FACTOR: '0', KAFKA_MIN_INSYNC_REPLICAS: 'two', KAFKA_ALLOW_UNDER_REPLICATED_TOPICS: 'yes' })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(KafkaConfigError)
    const message = (error as Error).message
    expect(message).toContain('KAFKA_REPLICATION_FACTOR must be a whole number >= 1 or -1, got "0"')
    expect(message).toContain('KAFKA_MIN_INSYNC_REPLICAS must be a whole number >= 1, got "two"')
    expect(message).toContain('KAFKA_ALLOW_UNDER_REPLICATED_TOPICS must be true or false, got "yes"')
  })

  it('refuses a min.insync.replicas above the replication factor (no acks=all write could succeed)', () => {
    expect(() => topicReplicationFromEnv({ KAFKA_REPLICATION_FACTOR: '2', KAFKA_MIN_INSYNC_REPLICAS: '3' })).toThrow(
      /KAFKA_MIN_INSYNC_REPLICAS \(3\) is above KAFKA_REPLICATION_FACTOR \(2\)/,
    )
  })
})

describe('minInsyncFor', () => {
  it('is 2 for three or more replicas, the configured value when set, else the broker default', () => {
    expect(minInsyncFor(3, undefined)).toBe(2)
    expect(minInsyncFor(5, undefined)).toBe(2)
    expect(minInsyncFor(1, undefined)).toBeUndefined()
    expect(minInsyncFor(2, undefined)).toBeUndefined()
    expect(minInsyncFor(3, 3)).toBe(3)
  })
})

describe('replicationFindings', () => {
  it('names a topic with fewer replicas than expected and one with min ISR 1 on three brokers', () => {
    const findings = replicationFindings(
      [
        { topic: 'a', minReplicas: 1, minInsyncReplicas: 2 },
        { topic: 'b', minReplicas: 3, minInsyncReplicas: 1 },
        { topic: 'c', minReplicas: 3, minInsyncReplicas: 2 },
      ],
      3,
      3,
    )
    expect(findings.map((f) => f.problem)).toEqual([
      'a has replication factor 1, expected 3',
      'b has min.insync.replicas=1 on a 3-broker cluster, expected at least 2',
    ])
  })

  it('accepts replication factor 1 and min ISR 1 on a single development broker', () => {
    expect(replicationFindings([{ topic: 'a', minReplicas: 1, minInsyncReplicas: 1 }], 1, 1)).toEqual([])
  })
})
