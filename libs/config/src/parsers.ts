import { z } from 'zod'

// Reusable parsers with messages that say what was expected, in operator words.

import { isLoopbackHost } from './loopback.ts'

/** `host:port[,host:port...]` */
export const brokerList = z.string().transform((raw, ctx) => {
  const brokers = raw
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0)
  const bad = brokers.filter((b) => !/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(b))
  if (brokers.length === 0 || bad.length > 0) {
    ctx.addIssue({ code: 'custom', message: `expected a comma-separated host:port list${bad.length ? ` (bad: ${bad.join(', ')})` : ''}` })
    return z.NEVER
  }
  return brokers
})

/**
 * An http(s) URL. External APIs must be HTTPS; plain HTTP is accepted only for
 * loopback, where the local simulators run.
 */
export function serviceUrl(options: { httpsUnlessLoopback?: boolean } = {}) {
  return z.string().transform((raw, ctx) => {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected an absolute URL such as https://api.example.com' })
      return z.NEVER
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      ctx.addIssue({ code: 'custom', message: `expected an http(s) URL, got protocol ${url.protocol}` })
      return z.NEVER
    }
    if (options.httpsUnlessLoopback && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      ctx.addIssue({ code: 'custom', message: 'must be an https:// URL (plain http is allowed only for loopback simulators)' })
      return z.NEVER
    }
    return raw.replace(/\/+$/, '')
  })
}

export const port = z.coerce.number({ message: 'expected a TCP port number' }).int('expected a whole number').min(0, 'expected 0..65535').max(65535, 'expected 0..65535')

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return z.coerce.number({ message: 'expected a number' }).int('expected a whole number').min(min, `expected at least ${min}`).max(max, `expected at most ${max}`)
}

export const boolean = z.string().transform((raw, ctx) => {
  const v = raw.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off'].includes(v)) return false
  ctx.addIssue({ code: 'custom', message: 'expected true or false' })
  return z.NEVER
})

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Durations as `250ms`, `30s`, `5m`, `1h`, `7d`, or a bare number of milliseconds; returns milliseconds. */
export const duration = z.string().transform((raw, ctx) => {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(raw.trim())
  if (!m) {
    ctx.addIssue({ code: 'custom', message: 'expected a duration such as 250ms, 30s, 5m, 1h or 7d' })
    return z.NEVER
  }
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']!)
})

/**
 * A point in time: `now`, an ISO-8601 date-time, or a duration meaning "that long
 * before" (`15m`, `24h`, `7d`). Parsed into a function because "now" and "7d ago"
 * are resolved when the caller needs the moment, not when the text was read.
 */
export const moment = z.string().transform((raw, ctx): (() => Date) => {
  const v = raw.trim()
  if (v.toLowerCase() === 'now') return () => new Date()
  const ago = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(v)
  if (ago) {
    const ms = Math.round(Number(ago[1]) * UNITS[ago[2]!]!)
    return () => new Date(Date.now() - ms)
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(v)) {
    const at = new Date(v)
    if (!Number.isNaN(at.getTime())) return () => at
  }
  ctx.addIssue({
    code: 'custom',
    message: 'expected now, an ISO-8601 date-time such as 2026-01-31T00:00:00Z, or a duration ago such as 15m, 24h or 7d',
  })
  return z.NEVER
})

export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
  message: 'expected one of fatal, error, warn, info, debug, trace, silent',
})

/** base64 of exactly `bytes` bytes (AES-256 keys). */
export function base64Key(bytes: number) {
  return z.string().transform((raw, ctx) => {
    const buf = Buffer.from(raw, 'base64')
    if (buf.length !== bytes || buf.toString('base64').replace(/=+$/, '') !== raw.trim().replace(/=+$/, '')) {
      ctx.addIssue({ code: 'custom', message: `expected base64 of exactly ${bytes} bytes (generate one with: openssl rand -base64 ${bytes})` })
      return z.NEVER
    }
    return buf
  })
}

export const nonEmpty = z.string().min(1, 'must not be empty')

export const csv = z.string().transform((raw) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0),
)
