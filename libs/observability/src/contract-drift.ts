import type { Logger } from 'pino'
import { counter, type Registry } from './metrics.ts'

/**
 * One answer (or refusal) of an external API that the interface description
 * allows but the client did not expect, and that the client tolerated: a field
 * in another JSON type, an absent optional field, a refused query parameter, an
 * operation that is not served. Counted and logged, never a failure by itself:
 * the pipeline keeps working and operators learn that the real API differs from
 * the simulators.
 *
 * `kind` is a short stable token (`type`, `absent`, `unknown-field`,
 * `param-refused`, `operation-missing`, `bare-401`, ...); `field` names the field,
 * parameter or path the drift is about. Keep both free of values: they become
 * metric labels, so their set must stay small.
 */
export interface ContractDrift {
  readonly api: 'enrichment' | 'bank'
  readonly operation: string
  readonly field: string
  readonly kind: string
  /** Safe-to-log detail for the one warning (for example the JSON type received). Never a value of a field. */
  readonly detail?: string
}

/** What libraries accept: they call it and never wait for it. */
export type ContractDriftListener = (drift: ContractDrift) => void

export const CONTRACT_DRIFT_METRIC = 'tep_api_contract_drift_total'

export interface ContractDriftRecorder {
  readonly listener: ContractDriftListener
  /** Drift kinds seen so far, `api operation field kind` -> count, for live views and tests. */
  seen(): ReadonlyMap<string, number>
}

/**
 * Counts every drift in `tep_api_contract_drift_total{api, operation, field, kind}`
 * and logs one warning per distinct (api, operation, field, kind): a page of
 * 500 items in another type must not write 500 lines.
 */
export function createContractDriftRecorder(options: { registry: Registry; logger?: Logger }): ContractDriftRecorder {
  const existing = options.registry.getSingleMetric(CONTRACT_DRIFT_METRIC)
  const metric =
    (existing as ReturnType<typeof counter> | undefined) ??
    counter(
      options.registry,
      CONTRACT_DRIFT_METRIC,
      'Answers of an external API that differ from what the client expected and were tolerated (see docs/operations.md).',
      ['api', 'operation', 'field', 'kind'],
    )
  const seen = new Map<string, number>()
  const listener: ContractDriftListener = (drift) => {
    metric.inc({ api: drift.api, operation: drift.operation, field: drift.field, kind: drift.kind })
    const key = `${drift.api} ${drift.operation} ${drift.field} ${drift.kind}`
    const count = seen.get(key) ?? 0
    seen.set(key, count + 1)
    if (count === 0) {
      options.logger?.warn(
        { api: drift.api, operation: drift.operation, field: drift.field, kind: drift.kind, detail: drift.detail },
        `the ${drift.api} API answered ${drift.operation} differently from what this client expected (${drift.field}: ${drift.kind}); tolerated, further occurrences are only counted in ${CONTRACT_DRIFT_METRIC}`,
      )
    }
  }
  return { listener, seen: () => seen }
}

/** For libraries whose caller passed no listener. */
export const ignoreContractDrift: ContractDriftListener = () => {}
