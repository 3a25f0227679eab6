/** Daily and monthly payment limits per account (ASSUMPTION: the spec gives no amounts). */
export interface PaymentLimits {
  dailyMinor: Record<string, number>
  monthlyMinor: Record<string, number>
}

export const DEFAULT_PAYMENT_LIMITS: PaymentLimits = {
  dailyMinor: { CZK: 500_000_00, EUR: 20_000_00, USD: 20_000_00 },
  monthlyMinor: { CZK: 2_000_000_00, EUR: 80_000_00, USD: 80_000_00 },
}

export interface LimitUse {
  executionDate: string
  amountMinor: number
}

/**
 * Which limit a new payment would exceed, given the account's payments that still
 * count (not rejected), cumulative by execution day and by calendar month.
 */
export function exceededLimit(limits: PaymentLimits, currency: string, existing: readonly LimitUse[], next: LimitUse): { limit: 'DAILY' | 'MONTHLY'; remainingMinor: number } | undefined {
  const daily = limits.dailyMinor[currency]
  const monthly = limits.monthlyMinor[currency]
  let day = 0
  let month = 0
  for (const p of existing) {
    if (p.executionDate === next.executionDate) day += p.amountMinor
    if (p.executionDate.slice(0, 7) === next.executionDate.slice(0, 7)) month += p.amountMinor
  }
  if (daily !== undefined && day + next.amountMinor > daily) return { limit: 'DAILY', remainingMinor: Math.max(0, daily - day) }
  if (monthly !== undefined && month + next.amountMinor > monthly) return { limit: 'MONTHLY', remainingMinor: Math.max(0, monthly - month) }
  return undefined
}
