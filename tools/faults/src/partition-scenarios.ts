import { CLUSTER_MAX_PAUSE_SECONDS } from './cluster-scenarios.ts'
import { PARTITION_FAULTS, PARTITION_HOLD_MS, type PartitionFaultName } from './network/partition-faults.ts'
import type { InjectContext } from './inject-context.ts'
import type { InjectResult, Scenario } from './scenarios.ts'
import type { SingleFault } from './single-fault.ts'

/**
 * Rows that split the cluster's network (`npm run faults -- --brokers 3`, as root
 * with iptables): each makes one partition of network/partition-faults.ts under
 * full traffic, keeps it its set time and heals it. Besides the checker's 0 lost /
 * 0 duplicated / 0 DLQ from faults, the output must flow again within
 * `PARTITION_MAX_RESUME_SECONDS` of the heal (measured by the flow monitor, from
 * the moment the rules were removed), and the row notes how many raw records the
 * ingest processed more than once around the fault (its own counters).
 */

/** The bound: output resumes within 60 s of each heal. */
export const PARTITION_MAX_RESUME_SECONDS = 60

/** Seconds of traffic before the fault, so that it meets a pipeline in full flow with a transaction open. */
const LEAD_IN_MS = 15_000

/** Longest the row waits, after the heal, for the ingest to commit what was sent before it, to count the records re-done. */
const CATCH_UP_TIMEOUT_MS = 120_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

/** The ingest's counters that tell records processed (attempts) from records committed. */
async function ingestCounts(ctx: InjectContext): Promise<{ in: number; out: number; starts: number } | undefined> {
  try {
    const text = await ctx.system.metricsText('transaction-ingest')
    const sum = (name: string) =>
      [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'gm'))].reduce((s, m) => s + Number(m[1]), 0)
    return { in: sum('ingest_records_in_total'), out: sum('ingest_records_out_total'), starts: ctx.system.service('transaction-ingest').starts }
  } catch {
    return undefined
  }
}

async function partitionRow(ctx: InjectContext, fault: SingleFault): Promise<InjectResult> {
  await sleep(ctx.startedAt + LEAD_IN_MS - Date.now())
  const before = await ingestCounts(ctx)
  const outcome = await fault.inject(ctx)
  // The difference of attempts and commits since the fault is the work done twice (aborted
  // transactions re-done), give or take the one transaction in flight when the counters are
  // read; it is known once the ingest has committed everything written before the heal.
  const caughtUpAt = await ctx.monitor.waitCaughtUp(CATCH_UP_TIMEOUT_MS)
  const after = await ingestCounts(ctx)
  const sinceHeal = (at: number) => `${((at - outcome.healedAt) / 1000).toFixed(1)} s after the heal`
  const redone =
    caughtUpAt === undefined
      ? `not counted (the ingest had not committed the records sent before the heal ${sinceHeal(Date.now())})`
      : before === undefined || after === undefined || after.starts !== before.starts
        ? 'not counted (the ingest restarted or did not answer)'
        : `${Math.max(0, Math.round(after.in - before.in - (after.out - before.out)))} records processed more than once (ingest attempts minus commits, ± one transaction in flight; caught up ${sinceHeal(caughtUpAt)})`
  return {
    faultsInjected: 1,
    lastFaultEndedAt: outcome.healedAt,
    healedAt: [outcome.healedAt],
    failures: [],
    notes: [outcome.description, `re-done: ${redone}`],
  }
}

function row(name: PartitionFaultName, weight: number, describe: string, options: { flowGoesOn?: boolean } = {}): Scenario {
  const fault = PARTITION_FAULTS.find((f) => f.name === name)
  if (fault === undefined) throw new Error(`no partition fault ${name}`)
  return {
    name,
    weight,
    topology: 'cluster',
    needsNetwork: true,
    // The pause is at least the partition itself where it stops the flow; the bound is on the resume after the heal.
    maxResumeAfterHealSeconds: PARTITION_MAX_RESUME_SECONDS,
    // Where a path around the fault exists (leadership can move, a bridge node, a link that still carries three
    // packets in four), the output may not stop longer than on a broker kill either.
    ...(options.flowGoesOn ? { maxPauseSeconds: CLUSTER_MAX_PAUSE_SECONDS } : {}),
    // Full traffic through the lead-in, the fault and a minute after the heal.
    minTrafficSeconds: (LEAD_IN_MS + PARTITION_HOLD_MS[name].full) / 1000 + 60,
    describe,
    inject: (ctx) => partitionRow(ctx, fault),
  }
}

export const PARTITION_SCENARIOS: Scenario[] = [
  row('partition-leader-from-quorum', 0.2, 'the leader of most raw partitions cut off from the other brokers and controllers (iptables), still reachable by clients: a zombie leader; 30 s', { flowGoesOn: true }),
  row('partition-broker-from-clients', 0.2, 'the leader of most raw partitions cut off from every client (services, traffic, checker), still in the cluster; 30 s'),
  row('partition-service-from-cluster', 0.2, 'transaction-ingest cut off from every broker with its transaction open, 90 s, then healed'),
  row('partition-bridge', 0.2, 'the raw topic\'s main leader and one other node cut from each other, the third node sees both; 60 s', { flowGoesOn: true }),
  row('lossy-link', 0.2, '25 % random packet loss each way between one broker (the raw topic\'s main leader) and every client, 2 minutes', { flowGoesOn: true }),
]

