import { describe, expect, it } from 'vitest'
import { createContractDriftRecorder, CONTRACT_DRIFT_METRIC } from './contract-drift.ts'
import { createMetricsRegistry } from './metrics.ts'

function captureLogger() {
  const warnings: unknown[][] = []
  const logger = { warn: (...args: unknown[]) => warnings.push(args) }
  return { warnings, logger: logger as never }
}

describe('createContractDriftRecorder', () => {
  it('counts every drift by api, operation, field and kind', async () => {
    const registry = createMetricsRegistry({ service: 't', defaultMetrics: false })
    const { listener } = createContractDriftRecorder({ registry })
    listener({ api: 'enrichment', operation: 'invalidations', field: 'data.currentTime', kind: 'type' })
    listener({ api: 'enrichment', operation: 'invalidations', field: 'data.currentTime', kind: 'type' })
    listener({ api: 'bank', operation: 'token', field: 'expires_in', kind: 'absent' })
    const text = await registry.metrics()
    expect(text).toContain(`${CONTRACT_DRIFT_METRIC}{api="enrichment",operation="invalidations",field="data.currentTime",kind="type",service="t"} 2`)
    expect(text).toContain(`${CONTRACT_DRIFT_METRIC}{api="bank",operation="token",field="expires_in",kind="absent",service="t"} 1`)
  })

  it('warns once per distinct drift, not once per occurrence', () => {
    const registry = createMetricsRegistry({ service: 't', defaultMetrics: false })
    const { warnings, logger } = captureLogger()
    const recorder = createContractDriftRecorder({ registry, logger })
    for (let i = 0; i < 5; i++) recorder.listener({ api: 'enrichment', operation: 'invalidations', field: 'level', kind: 'param-refused' })
    recorder.listener({ api: 'enrichment', operation: 'findBy', field: 'batch', kind: 'operation-missing' })
    expect(warnings).toHaveLength(2)
    expect(recorder.seen().get('enrichment invalidations level param-refused')).toBe(5)
  })

  it('shares the metric when two recorders use one registry', async () => {
    const registry = createMetricsRegistry({ service: 't', defaultMetrics: false })
    createContractDriftRecorder({ registry }).listener({ api: 'bank', operation: 'token', field: 'scope', kind: 'superset' })
    createContractDriftRecorder({ registry }).listener({ api: 'bank', operation: 'token', field: 'scope', kind: 'superset' })
    expect(await registry.metrics()).toContain('kind="superset",service="t"} 2')
  })
})
