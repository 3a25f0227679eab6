import { describe, expect, it } from 'vitest'
import { contractDriftSeed, parseCliOptions } from './cli-options.ts'

describe('bank-sim command line', () => {
  it('defaults to 127.0.0.1:8182 with five clients', () => {
    expect(parseCliOptions([])).toEqual({ help: false, port: 8182, host: '127.0.0.1', seed: 'bank-sim', clients: 5, historyDays: 730, dataSeed: '1', shops: 50_000, merchants: 5_000, https: false })
  })

  it('reads every option', () => {
    expect(parseCliOptions(['--port', '0', '--host', '::1', '--seed', 's1', '--clients', '12', '--history-days', '30', '--data-seed', '7', '--shops', '100', '--merchants', '10', '--https', '--help'])).toEqual({
      help: true,
      port: 0,
      host: '::1',
      seed: 's1',
      clients: 12,
      historyDays: 30,
      dataSeed: '7',
      shops: 100,
      merchants: 10,
      https: true,
    })
  })

  it('names the bad option', () => {
    expect(() => parseCliOptions(['--port', '70000'])).toThrow(/--port must be an integer from 0 to 65535/)
    expect(() => parseCliOptions(['--clients', 'many'])).toThrow(/--clients/)
    expect(() => parseCliOptions(['--colour'])).toThrow(/colour/)
  })

  it('takes --contract-drift with or without a seed, else SIM_BANK_CONTRACT_DRIFT; off by default', () => {
    expect(parseCliOptions([]).contractDrift).toBeUndefined()
    expect(parseCliOptions(['--contract-drift']).contractDrift).toBe('')
    expect(parseCliOptions(['--contract-drift=7', '--seed', 'x']).contractDrift).toBe('7')
    expect(contractDriftSeed(parseCliOptions(['--contract-drift', '--seed', 'x']), undefined)).toBe('x')
    expect(contractDriftSeed(parseCliOptions(['--contract-drift=7']), 'other')).toBe('7')
    expect(contractDriftSeed(parseCliOptions([]), undefined)).toBeUndefined()
    expect(contractDriftSeed(parseCliOptions([]), 'false')).toBeUndefined()
    expect(contractDriftSeed(parseCliOptions([]), 'true')).toBe('bank-sim')
    expect(contractDriftSeed(parseCliOptions([]), 'drift-9')).toBe('drift-9')
  })
})
