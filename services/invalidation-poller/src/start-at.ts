import { z } from 'zod'

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * INVALIDATIONS_START_AT: `now`, an ISO-8601 moment, or a duration meaning
 * "that long before start-up" (`7d`). Parsed into a function because "now"
 * and "7d ago" are resolved when the poller first needs them.
 */
export const startAtParser = z.string().transform((raw, ctx) => {
  const v = raw.trim()
  if (v.toLowerCase() === 'now') return () => new Date()
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(v)
  if (m) {
    const ago = Math.round(Number(m[1]) * UNITS[m[2]!]!)
    return () => new Date(Date.now() - ago)
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(v)) {
    const at = new Date(v)
    if (!Number.isNaN(at.getTime())) return () => at
  }
  ctx.addIssue({
    code: 'custom',
    message:
      'expected now, an ISO-8601 date-time such as 2026-01-31T00:00:00Z, or a duration ago such as 15m, 24h or 7d',
  })
  return z.NEVER
})
