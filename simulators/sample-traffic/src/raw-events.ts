import { generateSamples, type SampleKind, type SampleOutcome, type SimDataset } from '@tep/sim-data'
import { sampleToRaw, type RawSample } from './sample-to-raw.ts'

export interface RawEventOptions {
  count: number
  /** Varies the events; the same seed gives the same events. */
  seed?: number
  kind?: SampleKind
  outcome?: SampleOutcome
  /** Prefix of the generated transaction ids (unique per run, so replays don't collide). */
  idPrefix?: string
  now?: number
}

/**
 * `count` raw events with their expected outcomes, drawn from the simulator's
 * sample inputs (about 70 % matching, 20 % unknown, 10 % the API rejects, a few
 * the pipeline dead-letters). Samples that cannot be expressed as raw events are
 * replaced by the next ones, so exactly `count` come back.
 */
export function generateRawEvents(dataset: SimDataset, options: RawEventOptions): RawSample[] {
  const out: RawSample[] = []
  const prefix = options.idPrefix ?? 'tx'
  let round = 0
  while (out.length < options.count) {
    const want = Math.min(10_000, Math.ceil((options.count - out.length) * 1.2) + 5)
    const samples = generateSamples(dataset, {
      count: want,
      seed: (options.seed ?? 0) * 1000 + round,
      ...(options.kind ? { kind: options.kind } : {}),
      ...(options.outcome ? { outcome: options.outcome } : {}),
    })
    for (const sample of samples) {
      if (out.length >= options.count) break
      const built = sampleToRaw(sample, { transactionId: `${prefix}-${out.length}`, ...(options.now ? { now: options.now } : {}) })
      if (built) out.push(built)
    }
    round++
  }
  return out
}
