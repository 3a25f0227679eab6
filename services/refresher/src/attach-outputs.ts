import type { RefreshOutput } from './refresh-batch.ts'
import type { RefreshInput } from './refresh-input.ts'

/**
 * Gives each write to the LAST input record of its key in the batch. The
 * pipeline commits a prefix of the records when a later one fails
 * systemically; carrying the write on the last record of its key means that
 * whenever the write is committed, every input it covers is committed too, and
 * when it is not, redoing those inputs produces it again.
 */
export function attachOutputs(
  inputs: readonly RefreshInput[],
  outputs: readonly RefreshOutput[],
): RefreshOutput[][] {
  const lastIndex = new Map<string, number>()
  inputs.forEach((input, i) => {
    if (input.kind === 'invalidation-either') {
      lastIndex.set(`shop\u0000${input.key}`, i)
      lastIndex.set(`merchant\u0000${input.key}`, i)
    } else if (input.kind !== 'ignored' && input.kind !== 'unkeyed')
      lastIndex.set(`${input.entity}\u0000${input.key}`, i)
  })
  const perInput: RefreshOutput[][] = inputs.map(() => [])
  for (const output of outputs) {
    const i = lastIndex.get(`${output.entity}\u0000${output.key}`) ?? inputs.length - 1
    perInput[i]!.push(output)
  }
  return perInput
}
