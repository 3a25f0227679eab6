/**
 * Money is held as integer minor units (all simulated currencies have two
 * decimals) so sums are exact; it becomes a JSON number only when rendered.
 */

export const SUPPORTED_CURRENCIES = ['CZK', 'EUR', 'USD'] as const
export type Currency = (typeof SUPPORTED_CURRENCIES)[number]

export function isSupportedCurrency(value: unknown): value is Currency {
  return typeof value === 'string' && (SUPPORTED_CURRENCIES as readonly string[]).includes(value)
}

export function toMinor(value: number): number {
  return Math.round(value * 100)
}

export function fromMinor(minor: number): number {
  return minor / 100
}

/** True when `value` is a positive amount with at most two decimals. */
export function isValidAmount(value: unknown): value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return false
  return Math.abs(value * 100 - Math.round(value * 100)) < 1e-6
}

/** Fixed reference rates (CZK per unit), used for card payments abroad. */
export const CZK_PER_UNIT: Record<string, number> = { CZK: 1, EUR: 25.2, USD: 23.1, GBP: 29.6, PLN: 5.9, HUF: 0.064 }
