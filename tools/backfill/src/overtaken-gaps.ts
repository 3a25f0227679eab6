import type { KafkaLogger, OffsetOutOfRangeEvent } from '@tep/kafka'
import type { BackfillInput } from './backfill-input.ts'
import type { BackfillState } from './backfill-topics.ts'
import { BackfillRefusedError, RetentionGapError, type RetentionGap } from './errors.ts'
import { mergeGaps, overtakenGap } from './unread-gaps.ts'

interface BackfillRun {
  backfillId: string
  state: () => BackfillState
  /** Takes the state with an accepted gap added, at once (the next gap builds on it). */
  replaceState: (state: BackfillState) => void
  /** Stores a state (the state topic); called one store at a time, in order. */
  storeState: (state: BackfillState) => Promise<void>
  /** Ends the run: it is refused once the pipeline has stopped. */
  stop: () => void
  logger?: KafkaLogger
}

/**
 * Retention that overtakes a running backfill: its consumer asks for offsets the log no longer
 * holds (the pipeline's onOffsetOutOfRange). Without --accept-retention-gap the pipeline holds
 * the partition (`policy` 'hold') and the run ends refused, so that its committed position stays
 * before the gap and the next run is refused the same way (unread-gaps.ts); with it the run reads
 * on from the log start and the gap is stored in the state for the report.
 */
export class OvertakenGaps {
  /** The pipeline's `offsetOutOfRange` for this input. */
  readonly policy: 'reset' | 'hold'
  readonly input: BackfillInput
  readonly run: BackfillRun
  readonly #held: RetentionGap[] = []
  #refusal: Error | undefined
  #stateWritten: Promise<void> = Promise.resolve()

  constructor(input: BackfillInput, run: BackfillRun) {
    this.input = input
    this.run = run
    this.policy = input.kind === 'topic' && input.acceptRetentionGap === true ? 'reset' : 'hold'
  }

  /** The pipeline hook. */
  readonly onOffsetOutOfRange = (e: OffsetOutOfRangeEvent): void => {
    const { input, run } = this
    if (input.kind === 'file') {
      this.#refuse(
        new BackfillRefusedError(
          `the backfill's rows topic ${e.topic} lost staged rows before they were enriched (partition ${e.partition}: ` +
            `asked for offset ${e.requestedOffset}, the log holds ${e.logStartOffset} to ${e.highWatermark}); ` +
            'run the file again with --again (rows already enriched are enriched once more)',
        ),
      )
      return
    }
    if (e.held && e.logStartOffset === '-1') {
      // The cluster did not tell where the log starts: held all the same, and said so.
      this.#refuse(
        new BackfillRefusedError(
          `${e.topic}: partition ${e.partition} answered offset ${e.requestedOffset} out of range and its log offsets could not be read; ` +
            'retention may have removed records of the range unread. Run the same command again when the cluster answers',
        ),
      )
      return
    }
    const gap = overtakenGap(run.state().ranges ?? [], e)
    if (gap === undefined) {
      // A truncated log (unclean leader election): what the range held past its new end is gone.
      if (e.held && !e.removed)
        this.#refuse(
          new BackfillRefusedError(
            `${e.topic}: partition ${e.partition}'s log was truncated to ${e.highWatermark} while the backfill read it at ${e.requestedOffset}; ` +
              'records of the range it had not read may be gone. Check the topic, then run the range again with --again',
          ),
        )
      return
    }
    if (e.held) {
      this.#held.push(gap)
      this.#refusal = new RetentionGapError(input.topic, [...this.#held])
      run.stop()
      return
    }
    const state = { ...run.state(), retentionGaps: mergeGaps(run.state().retentionGaps ?? [], [gap]) }
    run.replaceState(state)
    this.#stateWritten = this.#stateWritten.then(() => run.storeState(state))
    run.logger?.warn(
      { backfillId: run.backfillId, retentionGap: gap },
      'retention removed records of the range while the backfill ran (--accept-retention-gap): reading on from the log start',
    )
  }

  /** After the pipeline stopped: waits for accepted gaps to be stored, then throws the refusal if there is one. */
  async settle(): Promise<void> {
    await this.#stateWritten
    if (this.#refusal !== undefined) throw this.#refusal
  }

  #refuse(err: Error): void {
    this.#refusal ??= err
    this.run.stop()
  }
}
