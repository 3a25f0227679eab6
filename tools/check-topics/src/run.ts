#!/usr/bin/env node
/**
 * `npm run check-topics`: the independent exactly-once check of a cluster's
 * raw → enriched + DLQ topics. See --help.
 */
import { checkTopics } from './check.ts'
import { HELP, OptionsError, parseOptions } from './options.ts'

async function main(): Promise<number> {
  let options
  try {
    options = parseOptions(process.argv.slice(2))
  } catch (err) {
    if (err instanceof OptionsError) {
      process.stderr.write(`check-topics: ${err.message}\n`)
      return 2
    }
    throw err
  }
  if (options === 'help') {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  for (const what of options.security.insecure ?? []) process.stderr.write(`check-topics: WARNING insecure Kafka setting accepted (KAFKA_ALLOW_INSECURE=true): ${what}\n`)
  try {
    const summary = await checkTopics(options, (line) => process.stderr.write(`check-topics: ${line}\n`))
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`)
    process.stderr.write(
      `check-topics: ${summary.passed ? 'PASSED' : 'FAILED'}: ${summary.raw.inWindow} raw checked, ${summary.lost} lost, ${summary.duplicated} duplicated, ` +
        `${summary.dlqFromFaults} dlq from faults, ${summary.unexpected} unexpected, ${summary.keyMismatches} key mismatches, ${summary.undecodable} undecodable` +
        (summary.redriven.records > 0 ? `; ${summary.redriven.records} re-driven (${summary.redriven.superseded} DLQ records superseded, ${summary.redriven.untraced} untraced)` : '') +
        '\n',
    )
    return summary.passed ? 0 : 1
  } catch (err) {
    process.stderr.write(`check-topics: could not check ${options.brokers.join(',')}: ${(err as Error).message}\n`)
    return 2
  }
}

process.exitCode = await main()
