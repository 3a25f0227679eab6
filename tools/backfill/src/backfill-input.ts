import type { FileFormat } from './file-rows.ts'

/** What a backfill reads: a file of rows, or a time window of a raw topic. */
export type BackfillInput =
  | { kind: 'file'; path: string; format?: FileFormat }
  | {
      kind: 'topic'
      topic: string
      from: Date
      to: Date
      /**
       * Backfill what the topic still holds even where retention may have removed the
       * range's first records (without it such a range is refused: see RetentionGapError).
       */
      acceptRetentionGap?: boolean
    }
