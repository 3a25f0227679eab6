import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export { Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * A registry per service instead of prom-client's global one, so tests and
 * in-process multi-service runs (npm start, benchmarks) don't collide on names.
 */
export function createMetricsRegistry(options: { service: string; defaultMetrics?: boolean }): Registry {
  const registry = new Registry()
  registry.setDefaultLabels({ service: options.service })
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry })
  return registry
}

/** Buckets (seconds) suited to API calls between 1 ms and 30 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export function counter(registry: Registry, name: string, help: string, labelNames: string[] = []): Counter<string> {
  return new Counter({ name, help, labelNames, registers: [registry] })
}

export function gauge(registry: Registry, name: string, help: string, labelNames: string[] = []): Gauge<string> {
  return new Gauge({ name, help, labelNames, registers: [registry] })
}

export function histogram(registry: Registry, name: string, help: string, labelNames: string[] = [], buckets = LATENCY_BUCKETS): Histogram<string> {
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] })
}
