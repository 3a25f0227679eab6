/** The backfill will not run as asked (same input again without --again); exit code 3. */
export class BackfillRefusedError extends Error {
  readonly code: string = 'BACKFILL_REFUSED'
  constructor(message: string) {
    super(message)
    this.name = 'BackfillRefusedError'
  }
}

/** Where a partition's log starts after retention removed records that the range may have held. */
export interface RetentionGap {
  partition: number
  /** The partition's first offset still in the log (the records before it are gone). */
  logStart: string
}

/**
 * A `--from/--to` range may start among records that retention already removed:
 * backfilling what is left would report "done" for a range it did not read whole.
 * Refused (exit code 3) unless `--accept-retention-gap` is given.
 */
export class RetentionGapError extends BackfillRefusedError {
  override readonly code = 'BACKFILL_RETENTION_GAP'
  readonly gaps: RetentionGap[]
  constructor(topic: string, gaps: RetentionGap[]) {
    super(
      `${topic}: the range may start before the oldest record still in the topic; retention removed ` +
        gaps.map((g) => `partition ${g.partition}'s offsets before ${g.logStart}`).join(', ') +
        '. Give --accept-retention-gap to backfill what is left, or an earlier source (a file) for the rest',
    )
    this.name = 'RetentionGapError'
    this.gaps = gaps
  }
}
