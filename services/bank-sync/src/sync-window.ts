/**
 * Which part of an account's history a sync asks for (`dateFrom`), and where the
 * watermark moves. Dates are the bank's calendar dates (YYYY-MM-DD, Prague).
 */

/**
 * The bank refuses `dateFrom` more than 90 days back unless the token is fresh from
 * the consent flow. One day of margin keeps a sync that straddles midnight (or a
 * clock a little ahead of the bank's) on the safe side of that rule.
 */
export const MAX_DAYS_WITHOUT_FRESH_TOKEN = 89

const DAY_MS = 86_400_000

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)
}

export function minDate(a: string, b: string): string {
  return a <= b ? a : b
}

export function maxDate(a: string, b: string): string {
  return a >= b ? a : b
}

export interface DateFromInput {
  /** The bank's today. */
  today: string
  /** The account's watermark; null before its first sync. */
  lastBookingDate: string | null
  overlapDays: number
  /** Oldest date among entries still pending (their booking must be seen), if any. */
  oldestPendingDate: string | null
  /** True only for a token pair straight from the code exchange, still within the bank's freshness window. */
  freshToken: boolean
  /** History to read on the first sync when the token is fresh. */
  backfillDays: number
}

export interface DateFromPlan {
  dateFrom: string
  /** True when dateFrom is older than the bank allows without a fresh token. */
  needsFreshToken: boolean
  /** Whether the window was cut to the bank's 90-day rule (history between was not read). */
  clamped: boolean
}

/**
 * First sync: the backfill (fresh token) or the most the bank gives without one.
 * Later syncs: the watermark minus the overlap (late bookings, pending to booked),
 * reaching back to the oldest pending entry, but never past the 90-day rule.
 */
export function planDateFrom(input: DateFromInput): DateFromPlan {
  const floor = addDays(input.today, -MAX_DAYS_WITHOUT_FRESH_TOKEN)
  if (input.lastBookingDate === null) {
    if (input.freshToken && input.backfillDays > MAX_DAYS_WITHOUT_FRESH_TOKEN) {
      return { dateFrom: addDays(input.today, -input.backfillDays), needsFreshToken: true, clamped: false }
    }
    const days = Math.min(input.backfillDays, MAX_DAYS_WITHOUT_FRESH_TOKEN)
    return { dateFrom: addDays(input.today, -days), needsFreshToken: false, clamped: false }
  }
  let wanted = addDays(input.lastBookingDate, -input.overlapDays)
  if (input.oldestPendingDate !== null) wanted = minDate(wanted, input.oldestPendingDate)
  if (wanted < floor) return { dateFrom: floor, needsFreshToken: false, clamped: true }
  return { dateFrom: wanted, needsFreshToken: false, clamped: false }
}

/**
 * Entries dated before this can never be returned to a later sync (the watermark
 * and the 90-day floor only move forward), so they may leave the seen set. One day
 * of margin: the next sync may run on the bank's next calendar day.
 */
export function seenHorizon(lastBookingDate: string | null, overlapDays: number, today: string): string {
  const floor = addDays(today, -MAX_DAYS_WITHOUT_FRESH_TOKEN - 1)
  if (lastBookingDate === null) return floor
  return maxDate(addDays(lastBookingDate, -overlapDays - 1), floor)
}
