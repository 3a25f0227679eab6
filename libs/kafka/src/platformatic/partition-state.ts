import type { Message } from '@platformatic/kafka'

/** What the exactly-once loop knows about one assigned input partition. */
export interface PartitionState {
  readonly key: string
  readonly topic: string
  readonly partition: number
  /** Received, not yet taken into a batch, in offset order. */
  queue: Message[]
  /** Next offset accepted from the stream; lower ones are repeats (after a seek or a rebalance). */
  position: bigint | undefined
  /**
   * False until the stable committed offset (KIP-447 require_stable) was read
   * after the assignment or a failure: records are not taken before, because
   * some of them may already be committed by an earlier owner or attempt.
   */
  floorKnown: boolean
  /** Bumped by every seek, pause and revocation: a batch taken before no longer speaks for the partition. */
  epoch: number
  /** Consecutive systemic failures. */
  failures: number
  paused: boolean
  pausedSince: number | undefined
  pausedCode: string
  resumeTimer: NodeJS.Timeout | undefined
}

export function newPartitionState(topic: string, partition: number): PartitionState {
  return {
    key: `${topic}:${partition}`,
    topic,
    partition,
    queue: [],
    position: undefined,
    floorKnown: false,
    epoch: 0,
    failures: 0,
    paused: false,
    pausedSince: undefined,
    pausedCode: '',
    resumeTimer: undefined,
  }
}

/** Records of one partition taken into a batch. */
export interface TakenRecords {
  state: PartitionState
  epoch: number
  messages: Message[]
}

/**
 * Takes up to `max` records over the partitions that may run, starting at a
 * rotating index so that no partition waits behind a busy one.
 */
export function takeBatch(states: PartitionState[], max: number, rotation: number): TakenRecords[] {
  const ready = states.filter((s) => s.queue.length > 0 && !s.paused && s.floorKnown)
  const taken: TakenRecords[] = []
  let room = max
  const share = Math.max(1, Math.ceil(max / Math.max(1, ready.length)))
  for (let i = 0; i < ready.length && room > 0; i++) {
    const state = ready[(i + rotation) % ready.length]!
    const n = Math.min(state.queue.length, share, room)
    taken.push({ state, epoch: state.epoch, messages: state.queue.splice(0, n) })
    room -= n
  }
  return taken
}

/** Records waiting in all queues. */
export function queuedCount(states: Iterable<PartitionState>): number {
  let n = 0
  for (const s of states) n += s.queue.length
  return n
}
