import { takeDone, type PartitionState, type Taken } from './partition-state.ts'
import type { WakeSignal } from './wake-signal.ts'

/** What the cadence reads of the exactly-once loop around it (eos-pipeline.ts). */
export interface CadenceHost {
  /** The assigned partitions' states. */
  readonly parts: ReadonlyMap<string, PartitionState>
  isRunning(): boolean
  /** Transforms started and not yet settled, all partitions. */
  inflight(): number
  /**
   * True while the input is ahead of the transforms: records wait in a partition's
   * queue for the in-flight budget, or the stream is paused for too much buffered.
   */
  backlogged(): boolean
}

export interface CadenceLimits {
  /** Largest number of records in one transaction, all partitions. */
  maxPerTxn: number
  /** How long a transaction waits for more finished records while the input is backlogged, ms. */
  lingerMs: number
}

/**
 * When the next transaction starts and what it holds: the commit loop's cadence.
 *
 * Transactions run one at a time, so while one commits the records finishing
 * meanwhile gather for the next (group commit): under load the transactions
 * grow by themselves. Lingering on top of that only pays when the input is ahead
 * of the loop (records wait for the in-flight budget): then a fuller transaction
 * saves a commit's round trips per record. When the transforms keep up, a record
 * becomes visible to read_committed readers only with the commit marker, so any
 * wait is added to every record's latency: the finished records are committed at
 * once. Before (always lingering `commitIntervalMs`, 5 ms by default, for up to
 * `maxPerTxn` records) each record at 1,000 ev/s waited the whole linger, since a
 * transaction never filled.
 */
export class CommitCadence {
  readonly #host: CadenceHost
  readonly #wake: WakeSignal
  readonly #limits: CadenceLimits

  constructor(host: CadenceHost, wake: WakeSignal, limits: CadenceLimits) {
    this.#host = host
    this.#wake = wake
    this.#limits = limits
  }

  /** Finished records over all partitions. */
  done(): number {
    let n = 0
    for (const s of this.#host.parts.values()) n += s.done.length
    return n
  }

  /**
   * Waits for finished records and takes up to `maxPerTxn` of them, starting at the
   * partition `rotation` points to; [] once stopped with nothing in flight or done.
   */
  async next(rotation: number): Promise<Taken[]> {
    const host = this.#host
    const { maxPerTxn, lingerMs } = this.#limits
    const idle = () => !host.isRunning() && host.inflight() === 0
    while (this.done() === 0 && !idle()) await this.#wake.wait()
    if (this.done() === 0) return []
    if (lingerMs > 0 && host.isRunning() && this.done() < maxPerTxn && host.backlogged()) {
      const deadline = Date.now() + lingerMs
      while (host.isRunning() && this.done() < maxPerTxn && Date.now() < deadline) await this.#wake.waitUntil(deadline)
    }
    return takeDone([...host.parts.values()], maxPerTxn, rotation)
  }
}
