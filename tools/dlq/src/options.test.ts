import { describe, expect, it } from 'vitest'
import { DlqOptionsError } from './errors.ts'
import { parseOptions } from './options.ts'

const env = { USER: 'alice' }
const parse = (...argv: string[]) => parseOptions(argv, env)

describe('parseOptions', () => {
  it('gives help for --help and for no command', () => {
    expect(parse('--help')).toBe('help')
    expect(parse()).toBe('help')
  })

  it('reads list filters: repeatable and comma-separated reasons, durations ago, a bucket', () => {
    const o = parse('list', '--reason', 'A,B', '--reason', 'C', '--since', '2h', '--bucket', '15m', '--json')
    expect(o).toMatchObject({ command: 'list', json: true, bucketMs: 900_000, filter: { reasons: ['A', 'B', 'C'] }, dlqTopic: 'transactions.dlq.v1' })
    if (o === 'help' || o.command !== 'list') throw new Error('not list')
    expect(Date.now() - o.filter.since!).toBeGreaterThanOrEqual(2 * 3_600_000)
  })

  it('takes show by partition:offset or by key', () => {
    expect(parse('show', '3:1042')).toMatchObject({ command: 'show', target: { partition: 3, offset: '1042' } })
    expect(parse('show', 'tx-17')).toMatchObject({ command: 'show', target: { key: 'tx-17' } })
  })

  it('fills the re-drive audit fields: operator from $USER or --operator, the note', () => {
    expect(parse('redrive', '--ids', '0:1,2:5', '--note', 'schema restored')).toMatchObject({ operator: 'alice', note: 'schema restored', filter: { ids: ['0:1', '2:5'] }, dryRun: false, forceAgain: false, perTransaction: 500 })
    expect(parse('redrive', '--all', '--dry-run', '--operator', 'bob', '--max', '10')).toMatchObject({ operator: 'bob', note: null, dryRun: true, max: 10, filter: {} })
  })

  it.each([
    [['frob'], /unknown command "frob"; use one of list, show, redrive/],
    [['list', '--max', '3'], /--max is an option of redrive, not of list/],
    [['list', '--bucket', 'hourly'], /--bucket must be a duration like 15m, 1h or 1d; got "hourly"/],
    [['list', '--since', 'yesterday'], /--since must be ISO-8601, epoch ms or a duration ago like 30m; got "yesterday"/],
    [['list', '--since', '1h', '--until', '2h'], /--since .* is after --until/],
    [['show'], /show takes one record: show <partition:offset> or show <key>/],
    [['redrive', '--note', 'x'], /redrive needs a selection: --reason, --since\/--until, --source-topic or --ids \(or --all/],
    [['redrive', '--all', '--reason', 'A', '--note', 'x'], /--all selects every DLQ record; it does not combine/],
    [['redrive', '--reason', 'A'], /say why in the audit record: --note/],
    [['redrive', '--ids', '3-1042', '--note', 'x'], /--ids takes partition:offset values \(e.g. 3:1042\); got "3-1042"/],
    [['redrive', '--reason', 'A', '--note', 'x', '--max', '0'], /--max must be a whole number of at least 1; got "0"/],
    [['list', '--brokers', 'kafka'], /--brokers must be host:port/],
    [['list', '--registry', 'registry:8081'], /--registry must be an http\(s\) URL/],
    [['list', '--bogus'], /Unknown option '--bogus'.*see --help/],
  ])('refuses %j with a readable message', (argv, message) => {
    expect(() => parse(...argv)).toThrow(DlqOptionsError)
    expect(() => parse(...argv)).toThrow(message)
  })

  it('needs an operator when $USER is not set, except for a dry run', () => {
    expect(() => parseOptions(['redrive', '--all', '--note', 'x'], {})).toThrow(/say who re-drives: --operator <name>/)
    expect(parseOptions(['redrive', '--all', '--dry-run'], {})).toMatchObject({ dryRun: true })
  })
})
