import { pino, type Logger, type LoggerOptions } from 'pino'
import { maskSensitiveText, redactDeep } from './redaction.ts'

export type { Logger } from 'pino'

/**
 * Paths whose values are replaced before a log line is written. Secrets must
 * never reach logs even when a whole options object or HTTP request is logged
 * by accident, so this is a safety net under the rule "do not log secrets".
 * redaction.ts goes deeper (any depth, PANs and IBANs inside strings); these
 * exact paths stay as pino's fast first pass.
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
    formatters: {
      level: (label) => ({ level: label }),
      // Deep: sensitive keys at any depth, PANs and IBANs inside any string (redaction.ts).
      log: (object) => redactDeep(object) as Record<string, unknown>,
    },
    hooks: {
      // The message string and its format arguments are masked too.
      logMethod(args, method) {
        const masked: unknown[] = args.map((a) => (typeof a === 'string' ? maskSensitiveText(a) : a))
        // logger.error(err) takes its message from the error: give it the masked one.
        if (masked.length === 1 && masked[0] instanceof Error) masked.push(maskSensitiveText(masked[0].message))
        return method.apply(this, masked as Parameters<typeof method>)
      },
    },
  }
  return options.destination ? pino(opts, options.destination as pino.DestinationStream) : pino(opts)
}
