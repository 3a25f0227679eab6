import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait-for.ts'
import { startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

/**
 * The bank rotates the refresh token on every refresh and accepts the old one only for a
 * short grace (60 s at the simulator). When the consents topic refuses the write of the new
 * pair (a broker outage), bank-sync must keep the pair and write it first when Kafka is back,
 * never refresh again from the stored, rotated-out token (which ends the consent as REVOKED).
 */
describe('a Kafka outage during a token refresh', () => {
  let h: Harness
  let instance: Instance
  let kafkaRefusesTokenWrites = false
  let refusedWrites = 0

  beforeAll(async () => {
    h = await startHarness()
    instance = await h.startInstance({
      sync: { backfillDays: 10 },
      hooks: {
        // Inside the real Kafka transaction, before its commit: throwing aborts it, as a
        // broker outage fails the commit.
        beforeCommit: async (write) => {
          if (kafkaRefusesTokenWrites && write.reason === 'TOKEN_REFRESH') {
            refusedWrites++
            throw new Error('broker unavailable (test)')
          }
        },
      },
    })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('pauses the consent, keeps the rotated tokens past the bank grace, and writes and uses them once Kafka is back', async () => {
    const gatewayUrl = instance.sync.gatewayUrl as string
    const { consentId } = await h.grantThroughGateway(gatewayUrl, 'customer-outage', 'user1')
    await h.waitForSync(instance, consentId, 0, 'synced')
    const counters = h.sim.context.tokens.counters
    const refreshesBefore = counters.refreshes
    const invalidGrantsBefore = counters.invalidGrants

    kafkaRefusesTokenWrites = true
    // The access token (1 h) needs a refresh: the bank rotates the refresh token, the write fails.
    h.sim.clock.advance(2 * 3_600_000)
    const firstFailure = instance.syncs.length
    await h.waitForSync(instance, consentId, firstFailure, 'backoff')
    expect(counters.refreshes).toBe(refreshesBefore + 1)

    // The old refresh token's grace at the bank runs out while Kafka is still down.
    h.sim.clock.advance(5 * 60_000)
    const afterGrace = instance.syncs.length
    // Two more attempts (the first may have started before the clock moved): both pause.
    const attempts = await waitFor('two attempts of the consent after the grace ran out', () => {
      const mine = instance.syncs.slice(afterGrace).filter((s) => s.consentId === consentId)
      return (mine.length >= 2 || mine.some((s) => s.outcome.kind !== 'backoff')) && mine
    })
    expect(attempts.map((s) => s.outcome.kind)).toEqual(attempts.map(() => 'backoff'))
    expect(refusedWrites).toBeGreaterThanOrEqual(2)

    kafkaRefusesTokenWrites = false
    const mark = instance.syncs.length
    // (a sync already past its refused write may still report a backoff)
    const next = await waitFor('the first sync of the consent after Kafka is back that is not a backoff', () =>
      instance.syncs.slice(mark).find((s) => s.consentId === consentId && s.outcome.kind !== 'backoff'),
    )
    expect(next.outcome.kind).toBe('synced')
    // One refresh at the bank for the whole outage, none refused.
    expect(counters.refreshes).toBe(refreshesBefore + 1)
    expect(counters.invalidGrants).toBe(invalidGrantsBefore)
    expect(instance.sync.ownedConsent(consentId)?.status).toBe('ACTIVE')

    const records = (
      await h.readUntil(h.topics.consents, h.codecs.consent, 'the kept tokens written', (r) =>
        r.some((c) => c.key === consentId && c.value.tokenIssuedAt !== c.value.grantedAt),
      )
    )
      .filter((c) => c.key === consentId)
      .map((c) => c.value)
    expect(records.map((c) => c.status)).not.toContain('REVOKED')

    // Later refreshes go on from the written token.
    h.sim.clock.advance(2 * 3_600_000)
    await h.waitForSync(instance, consentId, instance.syncs.length, 'synced')
    expect(counters.refreshes).toBe(refreshesBefore + 2)
    expect(counters.invalidGrants).toBe(invalidGrantsBefore)
  })
})
