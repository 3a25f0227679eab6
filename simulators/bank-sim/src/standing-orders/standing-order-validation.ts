import { isIsoDate } from '../core/bank-dates.ts'
import type { CobsErrorItem } from '../errors.ts'
import { BodyReader } from '../http/body-reader.ts'
import { ACCEPTED_INTERVALS, ACCEPTED_MODES, type Schedule } from './schedule.ts'

/**
 * Fields of the COBS standing order the bank does not process (spec table). They
 * are accepted and ignored: not stored, not echoed. Clients are expected to drop
 * them (or warn); the simulator does not refuse them.
 */
export const UNPROCESSED_FIELDS = [
  'standingOrder.alias',
  'standingOrder.exceptions.breaks',
  'standingOrder.exceptions.stoppages',
  'standingOrder.execution.intervalDue',
  'standingOrder.validity.maxAmount',
  'standingOrder.validity.maxIterations',
] as const

/**
 * Reads the schedule of a standing order with the bank's restrictions: only the
 * accepted intervals and modes, modeDue DUE_DAY_OF_MONTH, lastExecutionDate only
 * (and always) with UNTIL_DATE and not before the first execution.
 */
export function readSchedule(body: unknown): { schedule?: Schedule; errors: CobsErrorItem[]; ignored: string[] } {
  const r = new BodyReader(body)
  const ignored = UNPROCESSED_FIELDS.filter((f) => r.has(f))
  const firstDate = r.string('requestedExecutionDate', { required: true })
  if (firstDate !== undefined && !isIsoDate(firstDate)) r.errors.push({ error: 'DT01', scope: 'requestedExecutionDate', message: `requestedExecutionDate must be an ISO date YYYY-MM-DD, got ${JSON.stringify(firstDate)}` })
  r.object('standingOrder', { required: true })
  r.object('standingOrder.execution', { required: true })
  const interval = r.enumOf('standingOrder.execution.interval', ACCEPTED_INTERVALS, { required: true })
  const mode = r.enumOf('standingOrder.execution.mode', ACCEPTED_MODES, { required: true })
  r.enumOf('standingOrder.execution.modeDue', ['DUE_DAY_OF_MONTH'] as const)
  const last = r.string('standingOrder.validity.lastExecutionDate')
  if (last !== undefined) {
    if (mode !== undefined && mode !== 'UNTIL_DATE') {
      r.errors.push({ error: 'FIELD_INVALID', scope: 'standingOrder.validity.lastExecutionDate', message: `lastExecutionDate is allowed only with mode UNTIL_DATE, not ${mode}` })
    } else if (!isIsoDate(last)) {
      r.errors.push({ error: 'DT01', scope: 'standingOrder.validity.lastExecutionDate', message: `lastExecutionDate must be an ISO date YYYY-MM-DD, got ${JSON.stringify(last)}` })
    } else if (firstDate !== undefined && isIsoDate(firstDate) && last < firstDate) {
      r.errors.push({ error: 'DT01', scope: 'standingOrder.validity.lastExecutionDate', message: `lastExecutionDate ${last} is before the first execution ${firstDate}` })
    }
  } else if (mode === 'UNTIL_DATE') {
    r.errors.push({ error: 'FIELD_MISSING', scope: 'standingOrder.validity.lastExecutionDate', message: 'mode UNTIL_DATE needs standingOrder.validity.lastExecutionDate' })
  }
  if (r.errors.length > 0 || firstDate === undefined || interval === undefined || mode === undefined) return { errors: r.errors, ignored }
  return { schedule: { firstDate, interval, mode, ...(mode === 'UNTIL_DATE' && last !== undefined ? { lastExecutionDate: last } : {}) }, errors: [], ignored }
}
