import { BROKER_LOST_DOWN_MS, coordinator, killBroker, mostImportantBroker, pauseRawLeader, rawLeader, type BrokerTarget } from './broker-faults.ts'
import type { InjectContext } from './inject-context.ts'
import type { InjectResult, Scenario } from './scenarios.ts'

/**
 * Rows that need a replicated cluster (`npm run faults -- --brokers 3`): the
 * routine faults of production Kafka, during which partition leaders and the
 * transaction and group coordinators move between brokers. Every broker fault
 * hits the broker that matters most at that moment (found with Metadata and
 * FindCoordinator), and every row waits for the full ISR before the next fault,
 * as an operator would. The faults themselves are in broker-faults.ts (the soak
 * draws from the same ones).
 */

/** Longest pause a row may show while two of three brokers stay up (the bound). */
export const CLUSTER_MAX_PAUSE_SECONDS = 60

/**
 * Longest a kill row whose broker comes back (leader and coordinator kills) may wait, from a
 * kill, before the output grows again: the bound these rows are held to for a pause. Without it
 * a row whose output never flowed again after a kill could pass on its pause alone (a pause is
 * only measured between samples that answered).
 */
export const CLUSTER_MAX_RESUME_SECONDS = CLUSTER_MAX_PAUSE_SECONDS

/** Longest a row with a broker kept down may wait, from the kill, before output flows again (issue 35). */
export const BROKER_LOST_MAX_RESUME_SECONDS = 20

/**
 * How long `--quick` keeps broker-lost's broker down: twice its resume bound, so that "the
 * output flowed before the broker was back" still means something (it resumed in 13-14 s in the
 * runs of 2026-11-29), without holding the suite for the full run's 3 minutes.
 */
export const BROKER_LOST_QUICK_DOWN_MS = 2 * BROKER_LOST_MAX_RESUME_SECONDS * 1000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

/** `n` random moments within [lo, hi] of the planned run, in order. */
function moments(ctx: InjectContext, n: number, lo = 0.05, hi = 0.8): number[] {
  return Array.from({ length: n }, () => ctx.startedAt + ctx.plannedMs * (lo + (hi - lo) * ctx.random())).sort((a, b) => a - b)
}

/**
 * Kills (SIGKILL) the broker `target` picks, keeps it down for `downMs`, starts it
 * again and waits for the full ISR; `times` times at random moments.
 */
async function brokerKills(ctx: InjectContext, times: number, downMs: number, target: () => Promise<BrokerTarget>): Promise<InjectResult> {
  const at = moments(ctx, times)
  const notes: string[] = []
  const killedAt: number[] = []
  const backAt: number[] = []
  let last = Date.now()
  for (let i = 0; i < times; i++) {
    await sleep(at[i]! - Date.now())
    ctx.say(`  kill ${i + 1}/${times}:`)
    const outcome = await killBroker(ctx, await target(), downMs)
    killedAt.push(outcome.killedAt)
    backAt.push(outcome.killedAt + outcome.outageMs)
    last = outcome.healedAt
    notes.push(outcome.description)
  }
  return { faultsInjected: times, lastFaultEndedAt: last, failures: [], notes, killedAt, backAt }
}

/** kill -9 of the broker coordinating the ingest's transactional id or consumer group (FindCoordinator), down 15 s; twice. */
function coordinatorKill(kind: 'transaction' | 'group', weight: number): Scenario {
  return {
    name: kind === 'transaction' ? 'txn-coordinator-kill' : 'group-coordinator-kill',
    weight,
    topology: 'cluster',
    maxPauseSeconds: CLUSTER_MAX_PAUSE_SECONDS,
    maxResumeSeconds: CLUSTER_MAX_RESUME_SECONDS,
    resumeAfterKill: 'first-growth',
    describe:
      kind === 'transaction'
        ? "kill -9 of the transaction coordinator of the ingest's transactional id while transactions are open, down 15 s; twice"
        : "kill -9 of the ingest's consumer group coordinator, down 15 s; twice",
    inject: (ctx) => brokerKills(ctx, ctx.quick ? 1 : 2, ctx.quick ? 10_000 : 15_000, () => coordinator(ctx, kind)),
  }
}

export const CLUSTER_SCENARIOS: Scenario[] = [
  {
    name: 'leader-kill',
    weight: 0.2,
    topology: 'cluster',
    maxPauseSeconds: CLUSTER_MAX_PAUSE_SECONDS,
    maxResumeSeconds: CLUSTER_MAX_RESUME_SECONDS,
    resumeAfterKill: 'first-growth',
    describe: 'kill -9 of the broker leading most partitions of transactions.raw.v1, down 20 s, restarted; 3 times',
    inject: (ctx) =>
      brokerKills(ctx, ctx.quick ? 1 : 3, ctx.quick ? 12_000 : 20_000, () => rawLeader(ctx)),
  },
  coordinatorKill('transaction', 0.15),
  coordinatorKill('group', 0.15),
  {
    name: 'broker-lost',
    weight: 0.2,
    topology: 'cluster',
    maxPauseSeconds: CLUSTER_MAX_PAUSE_SECONDS,
    maxResumeSeconds: BROKER_LOST_MAX_RESUME_SECONDS,
    // A steady flow (three growing samples in a row), and before the broker is back: under full
    // traffic for minutes the output must keep growing without it, not show one transaction.
    resumeAfterKill: 'steady',
    resumeBeforeBrokerBack: true,
    // Full traffic for the whole outage, not a trickle: 20 s before the kill, 3 minutes down, 40 s after.
    minTrafficSeconds: 20 + BROKER_LOST_DOWN_MS / 1000 + 40,
    describe:
      'kill -9 of the broker that matters most (leader of most raw partitions, transaction or group coordinator), kept down 3 minutes under full traffic: output must flow again within 20 s of the kill; then started again until the full ISR',
    async inject(ctx) {
      await sleep(ctx.startedAt + (ctx.quick ? 10_000 : 20_000) - Date.now())
      const outcome = await killBroker(ctx, await mostImportantBroker(ctx), ctx.quick ? BROKER_LOST_QUICK_DOWN_MS : BROKER_LOST_DOWN_MS)
      return { faultsInjected: 1, lastFaultEndedAt: outcome.healedAt, failures: [], notes: [outcome.description], killedAt: [outcome.killedAt], backAt: [outcome.killedAt + outcome.outageMs] }
    },
  },
  {
    name: 'rolling-restart',
    weight: 0.2,
    topology: 'cluster',
    describe: 'every broker restarted cleanly (SIGTERM) one after another, waiting for the full ISR between them; twice, traffic at full rate',
    async inject(ctx) {
      const rounds = ctx.quick ? 1 : 2
      const notes: string[] = []
      let restarts = 0
      await sleep(ctx.startedAt + ctx.plannedMs * 0.05 - Date.now())
      for (let round = 1; round <= rounds; round++) {
        for (let nodeId = 1; nodeId <= ctx.system.brokerCount; nodeId++) {
          const outage = await ctx.system.restartBrokerNode(nodeId, 'SIGTERM')
          const isrMs = await ctx.system.probe.waitFullIsr()
          restarts++
          notes.push(`round ${round}, broker ${nodeId}: down ${(outage / 1000).toFixed(1)} s, full ISR ${(isrMs / 1000).toFixed(1)} s later`)
          ctx.say(`  rolling restart ${round}/${rounds}: broker ${nodeId} back after ${(outage / 1000).toFixed(1)} s, full ISR after ${(isrMs / 1000).toFixed(1)} s`)
        }
      }
      return { faultsInjected: restarts, lastFaultEndedAt: Date.now(), failures: [], notes }
    },
  },
  {
    name: 'broker-pause',
    weight: 0.1,
    topology: 'cluster',
    maxPauseSeconds: CLUSTER_MAX_PAUSE_SECONDS,
    describe: 'the raw topic\'s main leader frozen (SIGSTOP) for 20 s, longer than its session timeout (9 s), then continued (SIGCONT): a zombie leader',
    async inject(ctx) {
      await sleep(ctx.startedAt + ctx.plannedMs * 0.2 - Date.now())
      const outcome = await pauseRawLeader(ctx, ctx.quick ? 14_000 : 20_000)
      return { faultsInjected: 1, lastFaultEndedAt: outcome.healedAt, failures: [], notes: [outcome.description] }
    },
  },
  {
    name: 'scale-out',
    weight: 0.2,
    topology: 'any',
    describe: 'transaction-ingest scaled 1 -> 3 -> 1 and bank-sync 1 -> 2 -> 1 while traffic flows (rebalances under load, dynamic and static members)',
    async inject(ctx) {
      const { system } = ctx
      const at = moments(ctx, 4, 0.05, 0.75)
      const notes: string[] = []
      const ingestExtra = ctx.quick ? [1] : [1, 2]
      await sleep(at[0]! - Date.now())
      const added: string[] = []
      for (const n of ingestExtra) added.push(await system.addInstance('transaction-ingest', n))
      ctx.say(`  transaction-ingest scaled out to ${1 + added.length} instances`)
      await sleep(at[1]! - Date.now())
      for (const name of added) await system.removeInstance(name)
      ctx.say('  transaction-ingest scaled back to 1')
      notes.push(`transaction-ingest 1 -> ${1 + added.length} -> 1`)
      await sleep(at[2]! - Date.now())
      const bank = await system.addInstance('bank-sync', 1)
      ctx.say('  bank-sync scaled out to 2 instances')
      await sleep(at[3]! - Date.now())
      await system.removeInstance(bank)
      ctx.say('  bank-sync scaled back to 1')
      notes.push('bank-sync 1 -> 2 -> 1')
      return { faultsInjected: added.length * 2 + 2, lastFaultEndedAt: Date.now(), failures: [], notes }
    },
  },
]
