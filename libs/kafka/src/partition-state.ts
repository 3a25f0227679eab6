import type { Producer } from 'kafkajs'

/** What the pipeline knows about one assigned input partition. */
export interface PartitionState {
  readonly topic: string
  readonly partition: number
  readonly transactionalId: string
  producer: Producer | undefined
  /** Generation the producer was created in; a new assignment needs a new producer (fencing). */
  producerGeneration: number
  /**
   * The group's committed offset as read after fencing or after a failure. Records
   * below it were committed by an earlier attempt or owner and are skipped, in the
   * batch at hand and in later ones: it can lie beyond the batch that was fetched
   * (a zombie committed more than one fetch holds). Cleared once consumption reaches it.
   */
  floor: bigint | undefined
  /** Read the committed offset again before the next batch (set by every pause). */
  recheckFloor: boolean
  /**
   * The offset a commit whose outcome is unknown would have committed: EndTxn was
   * sent but its answer never came, so the broker may have committed it.
   */
  uncertainNext: bigint | undefined
  /** Consecutive systemic failures. */
  failures: number
  pausedSince: number | undefined
  pausedCode: string
  resumeTimer: NodeJS.Timeout | undefined
}

export const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`

/** A partition seen for the first time: no producer yet, nothing known about its committed offset. */
export function newPartitionState(
  transactionalIdPrefix: string,
  topic: string,
  partition: number,
): PartitionState {
  return {
    topic,
    partition,
    transactionalId: `${transactionalIdPrefix}-${topic}-${partition}`,
    producer: undefined,
    producerGeneration: -1,
    floor: undefined,
    recheckFloor: false,
    uncertainNext: undefined,
    failures: 0,
    pausedSince: undefined,
    pausedCode: '',
    resumeTimer: undefined,
  }
}
