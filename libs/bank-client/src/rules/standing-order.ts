import { assertIsoDate } from '../dates.ts'
import { BankInvalidArgumentError, StandingOrderRuleError, type RuleViolation } from '../errors.ts'
import type { StandingOrderRequest } from '../model/standing-orders.ts'

export const SUPPORTED_INTERVALS: ReadonlySet<string> = new Set([
  'WEEKLY',
  'MONTHLY',
  'QUARTERLY',
  'HALFYEARLY',
  'YEARLY',
])
export const SUPPORTED_MODES: ReadonlySet<string> = new Set(['UNTIL_CANCELLATION', 'UNTIL_DATE'])
export const SUPPORTED_MODE_DUES: ReadonlySet<string> = new Set(['DUE_DAY_OF_MONTH'])

/**
 * COBS fields the bank accepts in the schema but does not process. Sending them would
 * suggest a behaviour (a pause, a cap, a due day) that will not happen.
 */
export const UNPROCESSED_STANDING_ORDER_FIELDS = [
  'standingOrder.alias',
  'standingOrder.exceptions.breaks',
  'standingOrder.exceptions.stoppages',
  'standingOrder.exceptions.stopages',
  'standingOrder.execution.intervalDue',
  'standingOrder.validity.maxAmount',
  'standingOrder.validity.maxIterations',
] as const

/** `drop`: remove unprocessed fields and report a warning each (default). `refuse`: throw. */
export type UnprocessedFieldPolicy = 'drop' | 'refuse'

export interface StandingOrderWarning {
  field: string
  message: string
}

export interface PreparedStandingOrder {
  /** A copy of the request without the unprocessed fields. */
  body: StandingOrderRequest
  warnings: StandingOrderWarning[]
}

function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<string, unknown>)[key]
  }
  return cur
}

function deletePath(obj: Record<string, unknown>, path: string): void {
  const keys = path.split('.')
  const last = keys.pop()!
  let cur: unknown = obj
  for (const key of keys) {
    if (cur === null || typeof cur !== 'object') return
    cur = (cur as Record<string, unknown>)[key]
  }
  if (cur !== null && typeof cur === 'object') delete (cur as Record<string, unknown>)[last]
}

/**
 * Applies the bank's standing-order parameter table before sending: only the accepted
 * intervals, modes and modeDue; lastExecutionDate only (and then required) with UNTIL_DATE
 * and not before the first execution; CZK only (standing orders are domestic CZK transfers);
 * unprocessed fields dropped with a warning or refused, per `policy`.
 */
export function prepareStandingOrder(
  request: StandingOrderRequest,
  policy: UnprocessedFieldPolicy = 'drop',
): PreparedStandingOrder {
  const violations: RuleViolation[] = []
  const execution = request.standingOrder?.execution
  if (!execution) {
    throw new StandingOrderRuleError([
      { rule: 'SO_EXECUTION', field: 'standingOrder.execution', message: 'is required (interval and mode)' },
    ])
  }
  if (!SUPPORTED_INTERVALS.has(execution.interval)) {
    violations.push({
      rule: 'SO_INTERVAL',
      field: 'standingOrder.execution.interval',
      message: `must be one of ${[...SUPPORTED_INTERVALS].join(', ')}, got ${String(execution.interval)}`,
    })
  }
  if (!SUPPORTED_MODES.has(execution.mode)) {
    violations.push({
      rule: 'SO_MODE',
      field: 'standingOrder.execution.mode',
      message: `must be one of ${[...SUPPORTED_MODES].join(', ')}, got ${String(execution.mode)}`,
    })
  }
  if (execution.modeDue !== undefined && !SUPPORTED_MODE_DUES.has(execution.modeDue)) {
    violations.push({
      rule: 'SO_MODE_DUE',
      field: 'standingOrder.execution.modeDue',
      message: `must be DUE_DAY_OF_MONTH, got ${String(execution.modeDue)}`,
    })
  }
  const last = request.standingOrder.validity?.lastExecutionDate
  if (execution.mode === 'UNTIL_DATE' && last === undefined) {
    violations.push({
      rule: 'SO_LAST_EXECUTION',
      field: 'standingOrder.validity.lastExecutionDate',
      message: 'is required with mode UNTIL_DATE',
    })
  }
  if (last !== undefined && execution.mode !== 'UNTIL_DATE') {
    violations.push({
      rule: 'SO_LAST_EXECUTION',
      field: 'standingOrder.validity.lastExecutionDate',
      message: `is allowed only with mode UNTIL_DATE, got mode ${String(execution.mode)}`,
    })
  }
  for (const [field, value] of [
    ['requestedExecutionDate', request.requestedExecutionDate],
    ['standingOrder.validity.lastExecutionDate', last],
  ] as const) {
    if (value === undefined) continue
    try {
      assertIsoDate(value, field)
    } catch (err) {
      if (!(err instanceof BankInvalidArgumentError)) throw err
      violations.push({ rule: 'SO_DATE', field, message: err.message })
    }
  }
  if (
    last !== undefined &&
    request.requestedExecutionDate !== undefined &&
    last < request.requestedExecutionDate
  ) {
    violations.push({
      rule: 'SO_LAST_EXECUTION',
      field: 'standingOrder.validity.lastExecutionDate',
      message: `${last} is before the first execution ${request.requestedExecutionDate}`,
    })
  }
  const currency = request.amount?.instructedAmount?.currency
  if (currency !== 'CZK') {
    violations.push({
      rule: 'SO_CURRENCY',
      field: 'amount.instructedAmount.currency',
      message: `standing orders are domestic CZK transfers, got ${String(currency)}`,
    })
  }

  const present = UNPROCESSED_STANDING_ORDER_FIELDS.filter((f) => getPath(request, f) !== undefined)
  if (policy === 'refuse') {
    for (const field of present) {
      violations.push({
        rule: 'SO_UNPROCESSED_FIELD',
        field,
        message: 'is not processed by the bank; remove it',
      })
    }
  }
  if (violations.length > 0) throw new StandingOrderRuleError(violations)

  const body = structuredClone(request)
  const warnings: StandingOrderWarning[] = []
  for (const field of present) {
    deletePath(body as unknown as Record<string, unknown>, field)
    warnings.push({ field, message: `${field} is not processed by the bank and was not sent` })
  }
  const so = body.standingOrder as Record<string, unknown>
  for (const group of ['exceptions', 'validity']) {
    const value = so[group]
    if (value !== null && typeof value === 'object' && Object.keys(value).length === 0) delete so[group]
  }
  return { body, warnings }
}
