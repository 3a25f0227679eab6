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
  /**
   * Found before a resumed (or any) run read on: where the backfill was to read next. The
   * records from here to the log start (or the range end) were removed before it read them.
   */
  nextOffset?: string
  /** With `nextOffset`: how many offsets of the range were skipped unread. */
  skippedOffsets?: number
}

function describe(g: RetentionGap): string {
  if (g.nextOffset === undefined) return `partition ${g.partition}'s offsets before ${g.logStart}`
  return (
    `partition ${g.partition}'s ${g.skippedOffsets} offset(s) from ${g.nextOffset} ` +
    `(the backfill was to read on from ${g.nextOffset}; the log now starts at ${g.logStart})`
  )
}

/**
 * A `--from/--to` range may start among records that retention already removed, or
 * retention removed records of the range that a killed backfill had not read yet
 * before it was resumed: backfilling what is left would report "done" for a range it
 * did not read whole. Refused (exit code 3) unless `--accept-retention-gap` is given.
 */
export class RetentionGapError extends BackfillRefusedError {
  override readonly code = 'BACKFILL_RETENTION_GAP'
  readonly gaps: RetentionGap[]
  constructor(topic: string, gaps: RetentionGap[]) {
    const unread = gaps.some((g) => g.nextOffset !== undefined)
    super(
      (unread
        ? `${topic}: retention removed records of the range before this backfill read them: `
        : `${topic}: the range may start before the oldest record still in the topic; retention removed `) +
        gaps.map(describe).join(', ') +
        '. Give --accept-retention-gap to backfill what is left, or an earlier source (a file) for the rest',
    )
    this.name = 'RetentionGapError'
    this.gaps = gaps
  }
}
