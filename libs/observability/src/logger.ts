import { pino, type Logger, type LoggerOptions } from 'pino'

export type { Logger } from 'pino'

/**
 * Paths whose values are replaced before a log line is written. Secrets must
 * never reach logs even when a whole options object or HTTP request is logged
 * by accident, so this is a safety net under the rule "do not log secrets".
 */
export const REDACTED_PATHS = [
  'password',
  'secret',
  'clientSecret',
  'client_secret',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'token',
  'authorization',
  'Authorization',
  'pan',
  'cardNumber',
  '*.password',
  '*.secret',
  '*.clientSecret',
  '*.client_secret',
  '*.accessToken',
  '*.access_token',
  '*.refreshToken',
  '*.refresh_token',
  '*.token',
  '*.authorization',
  '*.Authorization',
  '*.pan',
  '*.cardNumber',
  '*.headers.authorization',
  '*.headers.Authorization',
  'headers.authorization',
  'headers.Authorization',
]

export interface CreateLoggerOptions {
  name: string
  level?: string
  /** Where to write; defaults to stdout. Tests pass a stream to read lines back. */
  destination?: NodeJS.WritableStream
  base?: Record<string, unknown>
}

export function createLogger(options: CreateLoggerOptions): Logger {
  const opts: LoggerOptions = {
    name: options.name,
    level: options.level ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    base: { service: options.name, pid: process.pid, ...options.base },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }
  return options.destination ? pino(opts, options.destination as pino.DestinationStream) : pino(opts)
}
