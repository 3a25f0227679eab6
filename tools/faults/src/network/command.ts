import { spawnSync } from 'node:child_process'
import { NetworkError } from './network-error.ts'

/**
 * Runs one `ip` or `iptables` command synchronously and returns its output.
 * Synchronous on purpose: the same calls tear the network down from an `exit`
 * handler, where nothing asynchronous runs any more.
 */
export function run(command: string, args: string[], options: { ignoreFailure?: boolean } = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8' })
  if (result.error !== undefined) {
    if (options.ignoreFailure) return ''
    throw new NetworkError(`${command} could not run: ${result.error.message}`, 'NETWORK_TOOL_MISSING', { cause: result.error })
  }
  if (result.status !== 0 && !options.ignoreFailure) {
    throw new NetworkError(`${command} ${args.join(' ')} exited with ${result.status}: ${result.stderr.trim()}`, 'NETWORK_COMMAND_FAILED')
  }
  return result.stdout
}
