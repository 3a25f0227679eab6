import { availableParallelism } from 'node:os'
import { OffsetReader, type Kafka, type KafkaLogger } from '@tep/kafka'
import type { TablePartition } from './table-loader-client.ts'

/**
 * Fewest table records worth a loader process of their own: a process costs
 * about half a second of CPU to start and a client of its own, which a
 * quarter of a million records (over a second of loading) pays back.
 */
export const MIN_RECORDS_PER_LOADER = 250_000

/** Loader processes by default: one per CPU available, at most 4. */
export function defaultLoaderProcesses(): number {
  return Math.max(1, Math.min(4, availableParallelism()))
}

/** How many records a partition of a table topic holds (high watermark − log start: an upper bound, compaction leaves fewer). */
export interface PartitionSize extends TablePartition {
  records: number
}

/**
 * Splits the table topics' partitions over loader processes, or undefined when
 * one process should read them all (few records, one usable CPU, one partition).
 * Each share gets whole partitions (a uid is always in the same one, so each
 * share's table holds distinct uids), largest first onto the least loaded
 * share, so that the shares finish close together. Empty partitions are
 * spread too: every partition is in exactly one share.
 */
export function planLoaderShares(
  sizes: readonly PartitionSize[],
  maxProcesses: number,
  minRecordsPerProcess = MIN_RECORDS_PER_LOADER,
): TablePartition[][] | undefined {
  const total = sizes.reduce((n, p) => n + Math.max(0, p.records), 0)
  const nonEmpty = sizes.filter((p) => p.records > 0).length
  const processes = Math.min(Math.floor(maxProcesses), Math.floor(total / Math.max(1, minRecordsPerProcess)), nonEmpty)
  if (processes <= 1) return undefined
  const shares = Array.from({ length: processes }, () => ({ records: 0, partitions: [] as TablePartition[] }))
  const largestFirst = [...sizes].sort((a, b) => b.records - a.records)
  for (const p of largestFirst) {
    let target = shares[0]!
    for (const share of shares) if (share.records < target.records) target = share
    target.records += Math.max(0, p.records)
    target.partitions.push({ topic: p.topic, partition: p.partition })
  }
  return shares.map((s) => s.partitions)
}

/** How long reading the topics' offsets for the plan may take before one process loads everything. */
const PLAN_TIMEOUT_MS = 5_000

/**
 * planLoaderShares of the table topics as they are now (their offsets read
 * once); undefined (one process) when they cannot be read within 5 s: the
 * loader then waits for the cluster itself, as a load by one process always did.
 */
export async function planLoaderSharesOf(options: {
  kafka: Kafka
  topics: readonly string[]
  maxProcesses: number
  minRecordsPerProcess?: number
  logger?: KafkaLogger
}): Promise<TablePartition[][] | undefined> {
  if (options.maxProcesses <= 1) return undefined
  const offsets = new OffsetReader(options.kafka)
  let timer: NodeJS.Timeout | undefined
  try {
    const sizes = await Promise.race([
      Promise.all(
        options.topics.map(async (topic) =>
          (await offsets.topicOffsets(topic)).map((p) => ({ topic, partition: p.partition, records: Number(p.high - p.low) })),
        ),
      ),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${PLAN_TIMEOUT_MS / 1000} s`)), PLAN_TIMEOUT_MS)
      }),
    ])
    return planLoaderShares(sizes.flat(), options.maxProcesses, options.minRecordsPerProcess)
  } catch (err) {
    options.logger?.warn({ err }, 'could not read the table topics\' offsets; one loader process reads every partition')
    return undefined
  } finally {
    clearTimeout(timer)
    await offsets.close().catch(() => {})
  }
}
