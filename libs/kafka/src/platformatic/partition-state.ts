import type { InputMessage } from './input-message.ts'
import { RecordQueue } from './record-queue.ts'
import type { OutputRecord, PipelineRecord } from '../pipeline-types.ts'

/** What became of one input record, ready to be committed. */
export type Outcome =
  | { kind: 'outputs'; record: PipelineRecord; outputs: OutputRecord[] }
  | { kind: 'dead-letter'; record: PipelineRecord; error: unknown }

/** A record being transformed; settled in any order, released in offset order. */
export interface InFlight {
  message: InputMessage
  record: PipelineRecord
  settled: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined
}

/** A transformed record waiting for a transaction, with the input message (its offset and group generation). */
export interface Done {
  message: InputMessage
  outcome: Outcome
}

/** What the exactly-once loop knows about one assigned input partition. */
export interface PartitionState {
  readonly key: string
  readonly topic: string
  readonly partition: number
  /** Received, not yet started, in offset order. */
  queue: RecordQueue
  /** Started, in offset order; at most `concurrency` long. */
  window: InFlight[]
  /** Transformed, in offset order, not yet taken into a transaction. */
  done: Done[]
  /** Next offset accepted from the stream; lower ones are repeats (after a seek or a rebalance). */
  position: bigint | undefined
  /**
   * False until the stable committed offset (KIP-447 require_stable) was read
   * after the assignment or a failure: records are not started before, because
   * some of them may already be committed by an earlier owner or attempt.
   */
  floorKnown: boolean
  /**
   * Set by a new assignment: once the floor is known, fetch from exactly there.
   * The stream restarts a partition at its (non-stable) committed offset only
   * when there is one; otherwise it goes on from where it was, past records this
   * instance fetched under the previous assignment but never committed.
   */
  restartAtFloor: boolean
  /** Fetched from offset 0 meaning "the beginning" (no committed offset): a later log start is not a gap. */
  fromPlaceholder: boolean
  /** Bumped by every seek and revocation: work started before no longer speaks for the partition. */
  epoch: number
  /** Consecutive systemic failures. */
  failures: number
  /** Offset of the record whose systemic failure paused the partition; a commit past it ends the failure streak. */
  failedAt: bigint | undefined
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
    queue: new RecordQueue(),
    window: [],
    done: [],
    position: undefined,
    floorKnown: false,
    restartAtFloor: true,
    fromPlaceholder: false,
    epoch: 0,
    failures: 0,
    failedAt: undefined,
    paused: false,
    pausedSince: undefined,
    pausedCode: '',
    resumeTimer: undefined,
  }
}

/** Records of one partition taken into a transaction. */
export interface Taken {
  state: PartitionState
  epoch: number
  done: Done[]
}

/**
 * Takes up to `max` transformed records over the partitions, starting at a
 * rotating index so that no partition waits behind a busy one.
 */
export function takeDone(states: PartitionState[], max: number, rotation: number): Taken[] {
  const ready = states.filter((s) => s.done.length > 0)
  const taken: Taken[] = []
  let room = max
  const share = Math.max(1, Math.ceil(max / Math.max(1, ready.length)))
  for (let i = 0; i < ready.length && room > 0; i++) {
    const state = ready[(i + rotation) % ready.length]!
    const n = Math.min(state.done.length, share, room)
    taken.push({ state, epoch: state.epoch, done: state.done.splice(0, n) })
    room -= n
  }
  return taken
}

/** Records received but not yet committed, over all partitions (bounds what is fetched ahead). */
export function bufferedCount(states: Iterable<PartitionState>): number {
  let n = 0
  for (const s of states) n += s.queue.length + s.window.length + s.done.length
  return n
}

/** Records in the windows (started, not yet released) of all partitions: what the in-flight budget counts. */
export function windowedCount(states: Iterable<PartitionState>): number {
  let n = 0
  for (const s of states) n += s.window.length
  return n
}

/** After a commit up to `lastOffset`: healthy again once the commit passed the record that failed. */
export function markCommitted(s: PartitionState, lastOffset: bigint): void {
  if (s.failedAt !== undefined && lastOffset < s.failedAt) return
  s.failedAt = undefined
  s.failures = 0
  s.pausedSince = undefined
  s.pausedCode = ''
}
