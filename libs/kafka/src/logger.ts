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
