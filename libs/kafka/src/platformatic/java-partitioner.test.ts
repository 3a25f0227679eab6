import { randomBytes } from 'node:crypto'
import { compatibilityPartitioner } from '@platformatic/kafka'
import { describe, expect, it } from 'vitest'
import { javaPartition, murmur2 } from './java-partitioner.ts'

describe('javaPartition', () => {
  it('puts every key where @platformatic/kafka\'s compatibilityPartitioner (Java\'s murmur2) does, every length and tail', () => {
    for (let length = 0; length <= 64; length++) {
      for (let n = 0; n < 50; n++) {
        const key = randomBytes(length)
        for (const partitions of [1, 3, 6, 7, 12]) {
          expect(javaPartition(key, partitions), `key ${key.toString('hex')} over ${partitions}`).toBe(
            compatibilityPartitioner(undefined as never, key) % partitions,
          )
        }
      }
    }
  })

  it('matches Kafka\'s own murmur2 on the UTF-8 keys of its test suite', () => {
    // org.apache.kafka.common.utils.UtilsTest#testMurmur2
    const cases: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ]
    for (const [text, hash] of cases) expect(murmur2(Buffer.from(text))).toBe(hash)
  })

  it('sends a record without a key to partition 0, as compatibilityPartitioner does', () => {
    expect(javaPartition(null, 6)).toBe(0)
    expect(javaPartition(undefined, 6)).toBe(0)
  })
})
