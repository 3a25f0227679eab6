/**
 * The soak's durations as people write them: `90s`, `20m`, `1h`, `1h30m`.
 * A bare number is refused (seconds or minutes? the unit says).
 */
const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 }

export function parseDuration(text: string): number | undefined {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(h|m|s)/g)]
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text.trim()) return undefined
  return Math.round(parts.reduce((ms, p) => ms + Number(p[1]) * UNITS[p[2]!]!, 0))
}

/** `1m-3m` → [60000, 180000]; undefined when malformed or min > max. */
export function parseInterval(text: string): [number, number] | undefined {
  const [lo, hi, ...rest] = text.split('-')
  if (lo === undefined || hi === undefined || rest.length > 0) return undefined
  const min = parseDuration(lo)
  const max = parseDuration(hi)
  if (min === undefined || max === undefined || min <= 0 || min > max) return undefined
  return [min, max]
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  if (s % 60 === 0) return `${s / 60} min`
  return `${Math.floor(s / 60)} min ${s % 60} s`
}
