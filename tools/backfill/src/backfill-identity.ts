import { createHash } from 'node:crypto'
import { basename } from 'node:path'
import type { BackfillInput } from './backfill-input.ts'
import type { BackfillState } from './backfill-topics.ts'
import { BackfillRefusedError } from './errors.ts'
import { fingerprint } from './file-rows.ts'

/** The identity of an input: SHA-256 of the file's bytes, or of topic and range. */
export async function identify(input: BackfillInput): Promise<{ sha256: string; source: string; lines: number }> {
  if (input.kind === 'file') {
    const { sha256, lines } = await fingerprint(input.path)
    return { sha256, source: basename(input.path), lines }
  }
  const source = `${input.topic}@${input.from.toISOString()}..${input.to.toISOString()}`
  return { sha256: createHash('sha256').update(source).digest('hex'), source, lines: 0 }
}

/** The run to do: the base id, or `<base>.<n>` for the n-th run with --again. */
export function chooseRun(
  base: string,
  states: Map<string, BackfillState>,
  again: boolean,
): { id: string; state: BackfillState | undefined } {
  const first = states.get(base)
  if (first?.finishedAt == null) return { id: base, state: first }
  if (!again)
    throw new BackfillRefusedError(
      `this input was already backfilled as ${base} (finished ${new Date(first.finishedAt).toISOString()}); ` +
        'give --again to enrich it once more (results are written again, marked with a new backfill id)',
    )
  for (let n = 2; ; n++) {
    const id = `${base}.${n}`
    const s = states.get(id)
    if (s?.finishedAt == null) return { id, state: s }
  }
}
