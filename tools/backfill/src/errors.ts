/** The backfill will not run as asked (same input again without --again); exit code 3. */
export class BackfillRefusedError extends Error {
  readonly code = 'BACKFILL_REFUSED'
  constructor(message: string) {
    super(message)
    this.name = 'BackfillRefusedError'
  }
}
