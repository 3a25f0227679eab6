import { logLevel, type LogEntry, type logCreator } from 'kafkajs'

/**
 * The part of a pino logger this library uses. Libraries take a logger and never
 * create one (CONVENTIONS.md); a pino `Logger` satisfies this interface.
 */
export interface KafkaLogger {
  debug(obj: object, msg?: string): void
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

/** A logger that drops everything, for callers that pass none. */
export const SILENT_LOGGER: KafkaLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
}

// KafkaJS logs CONCURRENT_TRANSACTIONS retries and transient coordinator moves at
// ERROR although it retries them itself; those are noise at error level.
const RETRIED_BY_KAFKAJS =
  /CONCURRENT_TRANSACTIONS|NOT_COORDINATOR|COORDINATOR_LOAD_IN_PROGRESS|REBALANCE_IN_PROGRESS/

/**
 * Routes KafkaJS's own log lines to a pino-compatible logger, keeping KafkaJS's
 * structured fields and naming the KafkaJS namespace (Consumer, Producer, ...).
 */
export function pinoLogCreator(logger: KafkaLogger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _name, ...rest } = log
      const fields = { kafkajs: namespace, ...rest }
      const text = String(message)
      switch (level) {
        case logLevel.ERROR:
          if (RETRIED_BY_KAFKAJS.test(text) || RETRIED_BY_KAFKAJS.test(String(rest.error ?? '')))
            logger.warn(fields, text)
          else logger.error(fields, text)
          break
        case logLevel.WARN:
          logger.warn(fields, text)
          break
        case logLevel.INFO:
          logger.info(fields, text)
          break
        default:
          logger.debug(fields, text)
      }
    }
}
