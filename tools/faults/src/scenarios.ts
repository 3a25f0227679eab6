import { exampleRawCardTransaction } from '@tep/schemas'
import { Fuzzer } from './fuzz.ts'
import { grantConsent } from './consent-grant.ts'
import { apiBurst, BANK_BURSTS, ENRICHMENT_BURSTS } from './single-faults/api-chaos.ts'
import { restartOnlyBroker } from './single-faults/broker-kill.ts'
import { registryOutage } from './single-faults/registry-outage.ts'
import { killService } from './single-faults/service-kill.ts'
import { SERVICES, type FaultSystem } from './system.ts'
import type { ExtraRecord } from './traffic.ts'
import type { InjectContext } from './inject-context.ts'

export interface InjectResult {
  faultsInjected: number
  /** When the last fault was over (process back, API healthy again). */
  lastFaultEndedAt: number
  failures: string[]
  notes: string[]
  /** When each broker kill was sent: the row reports how long after each the output flowed again. */
  killedAt?: number[]
  /** For each kill, when the killed broker answered again (same order as killedAt). */
  backAt?: number[]
  /** When each network partition was healed (rules removed): the row reports how long after each the output flowed again. */
  healedAt?: number[]
}

export interface Scenario {
  name: string
  /** Where the row can run: a single broker, a replicated cluster (3+ brokers), or either (default 'any'). */
  topology?: 'single' | 'cluster' | 'any'
  /** A row whose longest output pause exceeds this fails (cluster rows: 60 s while two brokers stay up). */
  maxPauseSeconds?: number
  /** A row whose output flows again later than this after a kill (InjectResult.killedAt), or never, fails. */
  maxResumeSeconds?: number
  /**
   * When the output counts as flowing again after a kill (flow-monitor.ts, resumedAfterSeconds):
   * 'steady' (default), three growing samples in a row after the pause; 'first-growth', the
   * first growing sample after the pause (the kill rows whose broker comes back after 10-20 s:
   * their backlog can come back in one transaction and the pipeline then has nothing more to do).
   */
  resumeAfterKill?: 'steady' | 'first-growth'
  /** The output must flow again before the killed broker answers again (nothing may wait for it): `broker-lost`. */
  resumeBeforeBrokerBack?: boolean
  /** A row whose output flows again later than this after a heal (InjectResult.healedAt) fails. */
  maxResumeAfterHealSeconds?: number
  /** Needs every party on its own address (the cluster network: root, iproute2, iptables). */
  needsNetwork?: boolean
  /** Seconds of full-rate traffic the row needs at least (a long outage under full traffic), whatever its weight; not with --quick. */
  minTrafficSeconds?: number
  /** Share of the suite's raw events this row produces. */
  weight: number
  describe: string
  /** Extra records mixed into the traffic (fuzz). */
  extra?: (ctx: { system: FaultSystem; prefix: string }) => { records: (n: number) => Promise<ExtraRecord[]>; summary: () => string; count: () => number }
  inject(ctx: InjectContext): Promise<InjectResult>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)))
/** `n` random moments within [lo, hi] of the planned run, in order. */
function moments(ctx: InjectContext, n: number, lo = 0.05, hi = 0.85): number[] {
  return Array.from({ length: n }, () => ctx.startedAt + ctx.plannedMs * (lo + (hi - lo) * ctx.random())).sort((a, b) => a - b)
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'kill-services',
    weight: 0.3,
    describe: 'kill -9 of transaction-ingest, refresher, invalidation-poller and bank-sync, 5 times each at random moments, restarted by the harness',
    async inject(ctx) {
      const kills = SERVICES.flatMap((s) => Array.from({ length: ctx.quick ? 1 : 5 }, () => s))
      // Shuffle so the services' kills interleave.
      for (let i = kills.length - 1; i > 0; i--) {
        const j = Math.floor(ctx.random() * (i + 1))
        ;[kills[i], kills[j]] = [kills[j]!, kills[i]!]
      }
      const at = moments(ctx, kills.length)
      let last = Date.now()
      for (const [i, name] of kills.entries()) {
        await sleep(at[i]! - Date.now())
        const outcome = await killService(ctx, name)
        last = outcome.healedAt
        ctx.say(`  kill -9 ${name} (${i + 1}/${kills.length}), back after ${((outcome.healedAt - outcome.startedAt) / 1000).toFixed(1)} s`)
      }
      return { faultsInjected: kills.length, lastFaultEndedAt: last, failures: [], notes: [] }
    },
  },
  {
    name: 'broker-restarts',
    weight: 0.2,
    topology: 'single',
    describe: 'the broker killed with SIGKILL and restarted twice, and one clean (SIGTERM) restart',
    async inject(ctx) {
      const kinds: Array<'SIGKILL' | 'SIGTERM'> = ctx.quick ? ['SIGKILL'] : ['SIGKILL', 'SIGTERM', 'SIGKILL']
      const at = moments(ctx, kinds.length, 0.1, 0.8)
      let last = Date.now()
      for (const [i, signal] of kinds.entries()) {
        await sleep(at[i]! - Date.now())
        last = (await restartOnlyBroker(ctx, signal)).healedAt
      }
      return { faultsInjected: kinds.length, lastFaultEndedAt: last, failures: [], notes: [] }
    },
  },
  {
    name: 'registry-outage',
    weight: 0.1,
    describe: 'the schema registry stopped (SIGSTOP) for 30 s, transaction-ingest killed and restarted in the middle of it (so it needs the registry)',
    async inject(ctx) {
      await sleep(ctx.startedAt + ctx.plannedMs * 0.2 - Date.now())
      const outcome = await registryOutage(ctx, ctx.quick ? 12_000 : 30_000)
      return { faultsInjected: 2, lastFaultEndedAt: outcome.healedAt, failures: [], notes: ['ingest restarted while the registry was stopped'] }
    },
  },
  {
    name: 'enrichment-api-chaos',
    weight: 0.15,
    describe: 'enrichment simulator /__admin/faults: 5xx bursts, 429 with Retry-After, latency beyond the client timeout, connection resets, token revocation',
    async inject(ctx) {
      const bursts = ENRICHMENT_BURSTS
      const at = moments(ctx, bursts.length, 0.05, 0.8)
      let last = Date.now()
      for (const [i, b] of bursts.entries()) {
        await sleep(at[i]! - Date.now())
        // Latency must outlast the client timeout even in the short version.
        last = (await apiBurst(ctx, 'enrichment', b, ctx.quick && b.ms < 12_000 ? b.ms / 2 : b.ms)).healedAt
      }
      return { faultsInjected: bursts.length, lastFaultEndedAt: last, failures: [], notes: [] }
    },
  },
  {
    name: 'bank-api-chaos',
    weight: 0.1,
    describe: 'bank simulator: 5xx, 429, a consent revoked mid-sync, a refresh token past 90 days (then fresh consents)',
    async inject(ctx) {
      const { system } = ctx
      const failures: string[] = []
      const notes: string[] = []
      // New days of history keep bank-sync busy while the bank misbehaves.
      const bursts = [BANK_BURSTS[500], ...(ctx.quick ? [] : [BANK_BURSTS['503-half']]), BANK_BURSTS[429]]
      const at = moments(ctx, bursts.length + 2, 0.05, 0.8)
      for (const [i, b] of bursts.entries()) {
        await sleep(at[i]! - Date.now())
        await system.advanceBankClock(1)
        await apiBurst(ctx, 'bank', b, ctx.quick ? 5_000 : 8_000)
      }
      // Revoked mid-sync: a fresh consent (history backfill running) revoked by the user at the bank.
      await sleep(at[bursts.length]! - Date.now())
      const victim = await grantConsent(system, 'user3', `faults-revoked-${Date.now()}`)
      await sleep(1_500)
      const revoke = await fetch(`${system.bankUrl}/__admin/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ consentId: victim.bankConsentId }) })
      ctx.say(`  bank: consent ${victim.consentId} revoked by the user mid-sync (${revoke.status})`)
      const statusOf = (id: string) => system.consentStatus(id)
      // bank-sync learns of a revocation on its next call to the bank (it may be backing off after the bursts above).
      const waitFor = async (done: () => Promise<boolean>) => {
        const deadline = Date.now() + 180_000
        while (Date.now() < deadline && !(await done())) await sleep(2_000)
      }
      let revoked: string | undefined
      await waitFor(async () => (revoked = await statusOf(victim.consentId)) === 'REVOKED')
      notes.push(`consent revoked at the bank: ${revoked}`)
      if (revoked !== 'REVOKED') failures.push(`the consent revoked at the bank is ${revoked} 180 s later, not REVOKED`)
      // Past 90 days: every accounts consent (and its refresh token) expires.
      await sleep(at[bursts.length + 1]! - Date.now())
      await system.advanceBankClock(91)
      ctx.say('  bank: clock moved 91 days on (refresh tokens past 90 days)')
      let expired: Array<string | undefined> = []
      await waitFor(async () => (expired = await Promise.all(system.consentIds.map(statusOf))).every((s) => s === 'EXPIRED'))
      notes.push(`consents past 90 days: ${expired.join(', ')}`)
      if (!expired.every((s) => s === 'EXPIRED')) failures.push(`consents past 90 days are ${expired.join(', ')} 180 s later, not EXPIRED`)
      // Later rows get bank traffic from fresh consents.
      await system.grantSampleConsents()
      return { faultsInjected: bursts.length + 2, lastFaultEndedAt: Date.now(), failures, notes }
    },
  },
  {
    name: 'fuzzed-input',
    weight: 0.15,
    describe: 'fast-check fuzz mixed into good traffic: random bytes, unknown schema ids, schema-valid absurd, empty and oversized values',
    extra: ({ system, prefix }) => {
      const fuzzer = new Fuzzer({ codec: system.traffic.codec, template: exampleRawCardTransaction('fuzz-template'), prefix })
      return {
        records: (n) => fuzzer.records(Math.max(1, Math.round(n * 0.05))),
        summary: () => [...fuzzer.made].map(([k, v]) => `${k} ${v}`).join(', '),
        count: () => [...fuzzer.made.values()].reduce((a, b) => a + b, 0),
      }
    },
    async inject() {
      // The faults are the fuzz records themselves, sent with the traffic.
      return { faultsInjected: 0, lastFaultEndedAt: Date.now(), failures: [], notes: [] }
    },
  },
]
