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
      // The message string and its format arguments are masked too; an object argument of
      // `%o`/`%O`/`%j` is interpolated as JSON into the message, so it is redacted deeply first.
      logMethod(args, method) {
        const masked: unknown[] = args.map((a, i) =>
          typeof a === 'string' ? maskSensitiveText(a) : i > 0 && typeof a === 'object' && a !== null ? redactDeep(a) : a,
        )
        // logger.error(err) takes its message from the error: give it the masked one.
        if (masked.length === 1 && masked[0] instanceof Error) masked.push(maskSensitiveText(masked[0].message))
        return method.apply(this, masked as Parameters<typeof method>)
      },
    },
  }
  const logger = options.destination ? pino(opts, options.destination as pino.DestinationStream) : pino(opts)
  // A child's bindings are serialised once, into every line of the child, and pass neither
  // through `log` nor (pino resets it for children) through `formatters.bindings`: redact them
  // as the child is made. Children inherit this `child`, so grandchildren are covered too.
  const child = logger.child as unknown as (this: unknown, bindings: pino.Bindings, childOptions?: unknown) => Logger
  logger.child = function (this: unknown, bindings: pino.Bindings, childOptions?: unknown) {
    return child.call(this, redactDeep(bindings) as pino.Bindings, childOptions)
  } as unknown as Logger['child']
  return logger
}
