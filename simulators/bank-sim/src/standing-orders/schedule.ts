import { addDays, addMonthsClamped } from '../core/bank-dates.ts'

export const ACCEPTED_INTERVALS = ['WEEKLY', 'MONTHLY', 'QUARTERLY', 'HALFYEARLY', 'YEARLY'] as const
export type Interval = (typeof ACCEPTED_INTERVALS)[number]
export const ACCEPTED_MODES = ['UNTIL_CANCELLATION', 'UNTIL_DATE'] as const
export type ExecutionMode = (typeof ACCEPTED_MODES)[number]

const MONTHS: Record<Exclude<Interval, 'WEEKLY'>, number> = { MONTHLY: 1, QUARTERLY: 3, HALFYEARLY: 6, YEARLY: 12 }

export interface Schedule {
  firstDate: string
  interval: Interval
  mode: ExecutionMode
  lastExecutionDate?: string
}

/**
 * Execution dates of a schedule from `from` to `to` (inclusive). DUE_DAY_OF_MONTH:
 * every execution falls on the first date's day of month, moved to the month's
 * last day when the month is shorter (31 Jan, 28 Feb, 31 Mar, ...).
 */
export function executionDates(schedule: Schedule, from: string, to: string): string[] {
  const end = schedule.mode === 'UNTIL_DATE' && schedule.lastExecutionDate && schedule.lastExecutionDate < to ? schedule.lastExecutionDate : to
  const out: string[] = []
  const dayOfMonth = Number(schedule.firstDate.slice(8, 10))
  for (let i = 0; ; i++) {
    const date = schedule.interval === 'WEEKLY' ? addDays(schedule.firstDate, 7 * i) : addMonthsClamped(schedule.firstDate, MONTHS[schedule.interval] * i, dayOfMonth)
    if (date > end) break
    if (date >= from) out.push(date)
    if (i > 100_000) break
  }
  return out
}

/** The first execution on or after `date`, or undefined when the schedule has ended. */
export function nextExecutionDate(schedule: Schedule, date: string): string | undefined {
  const horizon = schedule.mode === 'UNTIL_DATE' && schedule.lastExecutionDate ? schedule.lastExecutionDate : addDays(date, 400)
  return executionDates(schedule, date, horizon)[0]
}
