import { OffsetReader, TOPICS, type Kafka } from '@tep/kafka'

export interface FlowSample {
  at: number
  /** Raw records not yet consumed by the ingest group (end offset minus committed offset), or undefined when Kafka did not answer. */
  lag: number | undefined
  /** Sum of the enriched and DLQ end offsets. */
  output: number | undefined
}

/**
 * Samples, once a second, how far the ingest group is behind and how much output
 * exists. From that: the longest pause (work waiting, no output growing) and
 * when the backlog is gone after the faults.
 */
export class FlowMonitor {
  samples: FlowSample[] = []
  private offsets: OffsetReader
  private timer: NodeJS.Timeout | undefined
  private partitions = 0
  private busy = false

  private readonly groupId: string

  constructor(kafka: Kafka, groupId = 'transaction-ingest') {
    this.groupId = groupId
    this.offsets = new OffsetReader(kafka)
  }

  async start(): Promise<void> {
    this.timer = setInterval(() => void this.sample(), 1_000)
  }

  async sample(): Promise<FlowSample> {
    let at = Date.now()
    let lag: number | undefined
    let output: number | undefined
    if (this.busy) return { at, lag, output }
    this.busy = true
    try {
      const [ends, done, enriched, dlq] = await Promise.all([
        this.offsets.topicOffsets(TOPICS.transactionsRaw, { readCommitted: true }),
        this.offsets.committedOffsets(this.groupId, TOPICS.transactionsRaw),
        this.offsets.topicOffsets(TOPICS.transactionsEnriched, { readCommitted: true }),
        this.offsets.topicOffsets(TOPICS.transactionsDlq, { readCommitted: true }),
      ])
      this.partitions = ends.length
      lag = backlogBehind(ends, done)
      output = [...enriched, ...dlq].reduce((sum, p) => sum + Number(p.high), 0)
      // Stamped when the figures were read: a sample that waited for a dead broker must not date
      // its output back to when it was asked for (that would shorten the pauses it measures).
      at = Date.now()
    } catch {
      // broker down: a sample without figures, which counts as "no progress"
    } finally {
      this.busy = false
    }
    const s = { at, lag, output }
    this.samples.push(s)
    return s
  }

  /**
   * Control records (transaction markers) sit at the end of partitions written
   * transactionally and are never "consumed", so a drained group can show a lag
   * of up to one or two records per partition.
   */
  drained(s: FlowSample): boolean {
    return s.lag !== undefined && s.lag <= 2 * Math.max(1, this.partitions)
  }

  /** Resolves once the backlog is gone and the output has not grown for `quietMs`, or after `timeoutMs`. Returns when it drained, or undefined. */
  async waitDrained(quietMs = 4_000, timeoutMs = 600_000): Promise<number | undefined> {
    const deadline = Date.now() + timeoutMs
    let quietSince: number | undefined
    let lastOutput: number | undefined
    while (Date.now() < deadline) {
      const s = await this.sample()
      if (this.drained(s) && s.output === lastOutput) {
        quietSince ??= s.at
        if (s.at - quietSince >= quietMs) return quietSince
      } else quietSince = undefined
      lastOutput = s.output
      await new Promise((r) => setTimeout(r, 1_000))
    }
    return undefined
  }

  /**
   * Resolves once the ingest group has committed the raw records written before the call
   * (the read_committed end offsets then), give or take the transaction markers `drained`
   * allows for, and returns when; undefined after `timeoutMs`. Unlike `waitDrained` it
   * does not need the traffic to stop: records written later do not count.
   */
  async waitCaughtUp(timeoutMs: number, pollMs = 1_000): Promise<number | undefined> {
    return waitCaughtUp(
      {
        ends: async () => {
          const ends = await this.offsets.topicOffsets(TOPICS.transactionsRaw, { readCommitted: true })
          this.partitions = ends.length
          return ends
        },
        committed: () => this.offsets.committedOffsets(this.groupId, TOPICS.transactionsRaw),
      },
      (behind) => this.drained({ at: Date.now(), lag: behind, output: undefined }),
      timeoutMs,
      pollMs,
    )
  }

  /** Longest stretch, in seconds, between `from` and `to` during which work waited and no output appeared. */
  maxPauseSeconds(from: number, to: number): number {
    let longest = 0
    let pausedSince: number | undefined
    let lastOutput: number | undefined
    for (const s of this.samples.filter((x) => x.at >= from && x.at <= to)) {
      const waiting = s.lag === undefined || !this.drained(s)
      const stalled = s.output === undefined || s.output === lastOutput
      if (waiting && stalled) {
        pausedSince ??= s.at
        longest = Math.max(longest, s.at - pausedSince)
      } else pausedSince = undefined
      if (s.output !== undefined) lastOutput = s.output
    }
    return Math.round(longest / 100) / 10
  }

  /**
   * Seconds from a broker kill at `killedAt` until the output flowed again: the start of
   * the first run of `flowingSamples` samples with growing output after the pause the kill
   * caused (3: a steady flow; 1: the first growth after the pause). 0 when no pause began
   * within `graceMs` of the kill (the output never stopped), null when it did not flow
   * again before `to`.
   */
  resumedAfterSeconds(killedAt: number, to: number, flowingSamples = FLOWING_SAMPLES, graceMs = 10_000): number | null {
    return resumedAfterSeconds(this.samples, killedAt, to, (s) => s.lag === undefined || !this.drained(s), graceMs, flowingSamples)
  }

  /**
   * The output's growth per sample from `from` to `to`, as "<seconds after from>:+<records>"
   * ("?" when Kafka did not answer): the timeline behind a pause, for the row's notes.
   */
  growthTimeline(from: number, to: number): string {
    let last = this.samples.filter((s) => s.at <= from && s.output !== undefined).at(-1)?.output
    const out: string[] = []
    for (const s of this.samples) {
      if (s.at <= from || s.at > to) continue
      const t = ((s.at - from) / 1000).toFixed(1)
      if (s.output === undefined || last === undefined) out.push(`${t}:?`)
      else out.push(`${t}:+${s.output - last}`)
      if (s.output !== undefined) last = s.output
    }
    return out.join(' ')
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.offsets.close()
  }
}

/** Raw records below `mark` (end offsets per partition) that the group has not committed yet (`committed`: its offsets per partition). */
export function backlogBehind(mark: Array<{ partition: number; high: bigint }>, committed: Map<number, bigint>): number {
  return mark.reduce((sum, p) => sum + Math.max(0, Number(p.high - (committed.get(p.partition) ?? 0n))), 0)
}

/**
 * FlowMonitor.waitCaughtUp over `read`: takes the end offsets once (retrying while Kafka does not
 * answer), then polls the committed offsets every `pollMs` until `caughtUp(records still behind
 * those ends)`; returns when, or undefined after `timeoutMs`.
 */
export async function waitCaughtUp(
  read: { ends: () => Promise<Array<{ partition: number; high: bigint }>>; committed: () => Promise<Map<number, bigint>> },
  caughtUp: (behind: number) => boolean,
  timeoutMs: number,
  pollMs = 1_000,
): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs
  let mark: Array<{ partition: number; high: bigint }> | undefined
  while (Date.now() < deadline) {
    try {
      mark ??= await read.ends()
      if (caughtUp(backlogBehind(mark, await read.committed()))) return Date.now()
    } catch {
      // Kafka did not answer: ask again
    }
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(0, deadline - Date.now()))))
  }
  return undefined
}

/**
 * Growing samples in a row that count as the output flowing again by default (one may be a
 * transaction that was already committing). A row can ask for fewer (Scenario.resumeAfterKill):
 * a catch-up after a short outage can clear the whole backlog in one or two transactions,
 * and then the pipeline is drained before a third growing sample could come.
 */
export const FLOWING_SAMPLES = 3

/**
 * FlowMonitor.resumedAfterSeconds over `samples` (in time order); `waiting(s)`: work was waiting at `s`;
 * `flowingSamples`: growing samples in a row that count as flowing (a non-growing sample while work
 * waits starts the count again).
 */
export function resumedAfterSeconds(
  samples: FlowSample[],
  killedAt: number,
  to: number,
  waiting: (s: FlowSample) => boolean,
  graceMs = 10_000,
  flowingSamples = FLOWING_SAMPLES,
): number | null {
  let lastOutput = samples.filter((s) => s.at <= killedAt && s.output !== undefined).at(-1)?.output
  let paused = false
  let runStart: number | undefined
  let run = 0
  for (const s of samples) {
    if (s.at <= killedAt || s.at > to) continue
    const grew = s.output !== undefined && lastOutput !== undefined && s.output > lastOutput
    if (s.output !== undefined) lastOutput = s.output
    if (grew) {
      runStart ??= s.at
      run++
      if (paused && run >= flowingSamples) return Math.round((runStart - killedAt) / 100) / 10
    } else if (waiting(s)) {
      paused = true
      runStart = undefined
      run = 0
    }
    if (!paused && s.at - killedAt >= graceMs) return 0
  }
  return null
}
