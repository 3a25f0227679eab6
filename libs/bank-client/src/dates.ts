import { BankInvalidArgumentError } from './errors.ts'

/** The bank books in Czech local time, so "today" and "future dated" are judged on the Prague calendar. */
export const BANK_TIME_ZONE = 'Europe/Prague'

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/

const pragueFormat = new Intl.DateTimeFormat('en-CA', {
  timeZone: BANK_TIME_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
})

/** The calendar date in Prague at `now`, as YYYY-MM-DD. */
export function bankToday(now: Date): string {
  return pragueFormat.format(now)
}

/** Throws unless `value` is a real calendar date in YYYY-MM-DD form. */
export function assertIsoDate(value: string, field: string): void {
  const m = ISO_DATE.exec(value)
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined
  if (!m || !d || d.toISOString().slice(0, 10) !== value) {
    throw new BankInvalidArgumentError(
      field,
      `${field} must be a calendar date YYYY-MM-DD, got ${JSON.stringify(value)}`,
    )
  }
}

/** Whole days from date `a` to date `b` (both YYYY-MM-DD); positive when b is later. */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000)
}
