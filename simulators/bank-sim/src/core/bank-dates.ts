/**
 * Calendar arithmetic in the bank's time zone (Europe/Prague). Booking dates,
 * `dateFrom`, execution dates and daily limits are local dates; instants are
 * epoch milliseconds. Dates are `YYYY-MM-DD` strings, which sort correctly as text.
 */

export const BANK_TIME_ZONE = 'Europe/Prague'
export const DAY_MS = 86_400_000

const dateFormat = new Intl.DateTimeFormat('en-CA', { timeZone: BANK_TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' })
const offsetFormat = new Intl.DateTimeFormat('en-US', { timeZone: BANK_TIME_ZONE, timeZoneName: 'longOffset' })

// Intl formatting is slow and history generation asks millions of times. Prague's
// offsets are whole hours, so the local date is constant within each UTC hour.
const dateByHour = new Map<number, string>()

/** The bank's local date of an instant. */
export function bankDate(epochMs: number): string {
  const hour = Math.floor(epochMs / 3_600_000)
  let date = dateByHour.get(hour)
  if (date === undefined) {
    date = dateFormat.format(hour * 3_600_000)
    if (dateByHour.size > 200_000) dateByHour.clear()
    dateByHour.set(hour, date)
  }
  return date
}

/** Offset of Prague from UTC at an instant, in minutes (60 in winter, 120 in summer). */
export function pragueOffsetMinutes(epochMs: number): number {
  const name = offsetFormat.formatToParts(epochMs).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT'
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name)
  if (!m) return 0
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]))
}

const dayOffset = new Map<string, number>()

/** The instant of a local wall-clock time (minutes after local midnight) on a bank date. */
export function bankInstant(date: string, minuteOfDay = 0): number {
  const utcGuess = Date.parse(`${date}T00:00:00Z`) + minuteOfDay * 60_000
  // Clocks change at 02:00/03:00 local time; from 04:00 on a day has one offset.
  if (minuteOfDay >= 240) {
    let offset = dayOffset.get(date)
    if (offset === undefined) {
      offset = exactOffset(Date.parse(`${date}T12:00:00Z`))
      if (dayOffset.size > 100_000) dayOffset.clear()
      dayOffset.set(date, offset)
    }
    return utcGuess - offset * 60_000
  }
  return utcGuess - exactOffset(utcGuess) * 60_000
}

/** Offset to subtract from a local wall-clock time read as UTC; two passes settle it on the days the clocks change. */
function exactOffset(utcGuess: number): number {
  const first = utcGuess - pragueOffsetMinutes(utcGuess) * 60_000
  return pragueOffsetMinutes(first)
}

export function isIsoDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false
  const d = new Date(`${text}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

/** Days from `a` to `b` (positive when b is later). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS)
}

export function daysInMonth(year: number, month1: number): number {
  return new Date(Date.UTC(year, month1, 0)).getUTCDate()
}

/**
 * Adds months keeping the day of month, clamped to the month's last day
 * (31 January + 1 month = 28/29 February), as banks run DUE_DAY_OF_MONTH orders.
 */
export function addMonthsClamped(date: string, months: number, dayOfMonth: number): string {
  const [y, m] = date.split('-').map(Number) as [number, number]
  const total = y * 12 + (m - 1) + months
  const year = Math.floor(total / 12)
  const month1 = (total % 12) + 1
  const day = Math.min(dayOfMonth, daysInMonth(year, month1))
  return `${year}-${String(month1).padStart(2, '0')}-${String(day).padStart(2, '0')}`
}

export function monthOf(date: string): string {
  return date.slice(0, 7)
}

/** HTTP-date or ISO 8601; undefined when unparseable. */
export function parseHttpDate(text: string): number | undefined {
  const t = Date.parse(text)
  return Number.isNaN(t) ? undefined : t
}
