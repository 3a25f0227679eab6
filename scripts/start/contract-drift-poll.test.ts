import { describe, expect, it } from 'vitest'
import { describeContractDrift, parseContractDrift } from './contract-drift-poll.ts'

const METRICS = `# HELP tep_api_contract_drift_total Answers of an external API ...
# TYPE tep_api_contract_drift_total counter
tep_api_contract_drift_total{api="enrichment",operation="invalidations",field="level",kind="param-refused",service="invalidation-poller"} 3
tep_api_contract_drift_total{api="bank",operation="token",field="expires_in",kind="absent",service="bank-sync"} 1
tep_other_total{api="enrichment"} 7
`

describe('parseContractDrift', () => {
  it('reads the drift counters by api, operation, field and kind and ignores other metrics', () => {
    expect([...parseContractDrift(METRICS)]).toEqual([
      ['enrichment invalidations level param-refused', 3],
      ['bank token expires_in absent', 1],
    ])
  })

  it('sums the same drift reported by two services', () => {
    const into = parseContractDrift(METRICS)
    parseContractDrift(METRICS, into)
    expect(into.get('enrichment invalidations level param-refused')).toBe(6)
  })
})

describe('describeContractDrift', () => {
  it('says none when nothing drifted', () => {
    expect(describeContractDrift({})).toMatch(/^none/)
  })

  it('lists the most frequent first and says how many more there are', () => {
    const text = describeContractDrift({ a: 1, b: 5, c: 2 }, 2)
    expect(text).toBe('b ×5 · c ×2 · +1 more (tep_api_contract_drift_total)')
  })
})
