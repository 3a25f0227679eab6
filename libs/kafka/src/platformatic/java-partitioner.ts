/**
 * The partition Java's default partitioner gives a keyed record:
 * `toPositive(murmur2(key)) % partitions` (Kafka's Utils.murmur2), so a key
 * lands where Java and KafkaJS clients put it. @platformatic/kafka's
 * compatibilityPartitioner computes the same with BigInt arithmetic, about a
 * microsecond per key: in the exactly-once loop, which assigns the partition of
 * every output before a send is sized, that was the largest single cost of an
 * identity transform after the client's own decoding. 32-bit integer
 * arithmetic (Math.imul) gives the same bits. A record without a key goes to
 * partition 0, as with compatibilityPartitioner.
 */
export function javaPartition(key: Buffer | null | undefined, partitions: number): number {
  if (key === null || key === undefined) return 0
  return (murmur2(key) & 0x7fffffff) % partitions
}

const SEED = 0x9747b28c
const M = 0x5bd1e995
const R = 24

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), as a signed 32-bit integer. */
export function murmur2(data: Buffer): number {
  const length = data.length
  let h = SEED ^ length
  const whole = length & ~3
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)
    k = Math.imul(k, M)
    k ^= k >>> R
    k = Math.imul(k, M)
    h = Math.imul(h, M)
    h ^= k
  }
  // The last one to three bytes, as Java's switch with fall-through.
  const rest = length & 3
  if (rest > 0) {
    if (rest === 3) h ^= data[whole + 2]! << 16
    if (rest >= 2) h ^= data[whole + 1]! << 8
    h ^= data[whole]!
    h = Math.imul(h, M)
  }
  h ^= h >>> 13
  h = Math.imul(h, M)
  h ^= h >>> 15
  return h | 0
}
