import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fetchRuntime, reapOrphanedStacks, startStack } from '@tep/local-stack'
import type { TestStack } from './stack-backend.ts'

const PREFIX = 'tep-test-stack-'

/**
 * A broker and a registry as child processes of the test runner, on free ports,
 * in a fresh temp folder: nothing a developer's `npm run stack:up` or a parallel
 * run uses is touched. Stacks left behind by a runner that was killed before its
 * teardown are stopped first.
 */
export async function startLocalStack(log: (line: string) => void): Promise<TestStack> {
  const reaped = await reapOrphanedStacks(os.tmpdir(), PREFIX)
  for (const dir of reaped) log(`stopped an orphaned test stack in ${dir}`)
  await fetchRuntime({ log })
  const stateDir = await mkdtemp(path.join(os.tmpdir(), PREFIX))
  const stack = await startStack({ stateDir })
  log(
    `local stack up: broker ${stack.brokers.join(',')} in ${(stack.timings.kafkaReadyMs / 1000).toFixed(1)} s, ` +
      `registry ${stack.registryUrl} in ${(stack.timings.registryReadyMs / 1000).toFixed(1)} s (logs: ${stateDir})`,
  )
  // Killed at the end of the run rather than shut down: the temp folder and its data go with it.
  return { brokers: stack.brokers, registryUrl: stack.registryUrl, stop: () => stack.stop({ kill: true }) }
}
