#!/usr/bin/env node
/** `npm run dlq`: list, show and re-drive dead letters. See --help. */
import { runList, runRedrive, runShow, type Output } from './commands.ts'
import { DlqToolError } from './errors.ts'
import { HELP } from './help.ts'
import { parseOptions } from './options.ts'

const io: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`dlq: ${text}\n`),
}

async function main(): Promise<number> {
  try {
    const options = parseOptions(process.argv.slice(2))
    if (options === 'help') {
      process.stdout.write(`${HELP}\n`)
      return 0
    }
    for (const what of options.security.insecure ?? []) io.err(`WARNING insecure Kafka setting accepted (KAFKA_ALLOW_INSECURE=true): ${what}`)
    if (options.command === 'list') return await runList(options, io)
    if (options.command === 'show') return await runShow(options, io)
    return await runRedrive(options, io)
  } catch (err) {
    if (err instanceof DlqToolError) {
      io.err(`${err.code}: ${err.message}${err.exitCode === 2 ? ' (npm run dlq -- --help)' : ''}`)
      return err.exitCode
    }
    io.err(`failed: ${(err as Error).stack ?? String(err)}`)
    return 1
  }
}

process.exitCode = await main()
// Clients that a timed-out call left connecting must not keep the process alive.
process.exit()
