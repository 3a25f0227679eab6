import { tracingVars } from '@tep/config'
import { describe, expect, it } from 'vitest'
import { readTracingConfig, type TracingEnv } from './tracing-config.ts'

/**
 * Every service's --help and README table list the OTEL_* variables from
 * @tep/config's `tracingVars`; the names actually read are those of
 * readTracingConfig. A variable read here but missing there would work while
 * no help or README mentioned it.
 */
describe('the OTEL_* variables', () => {
  it('are exactly the ones readTracingConfig reads', () => {
    const read = new Set<string>()
    // Values that make it walk every branch: an otlp exporter, a ratio sampler.
    const given: Record<string, string> = { OTEL_TRACES_EXPORTER: 'otlp,console', OTEL_TRACES_SAMPLER: 'traceidratio' }
    const env = new Proxy({} as TracingEnv, {
      get: (_t, name) => {
        if (typeof name === 'string') read.add(name)
        return typeof name === 'string' ? given[name] : undefined
      },
    })
    readTracingConfig(env, 'some-service')
    expect([...read].sort()).toEqual(Object.keys(tracingVars).sort())
  })
})
