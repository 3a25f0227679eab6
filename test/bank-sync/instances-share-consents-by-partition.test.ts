import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait-for.ts'
import { startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

describe('two bank-sync instances in one group', () => {
  let h: Harness
  let a: Instance
  let b: Instance

  beforeAll(async () => {
    h = await startHarness({ partitions: 4 })
    a = await h.startInstance()
    b = await h.startInstance({ gateway: false })
    await waitFor('the four consents partitions split between both instances', async () => {
      const owned = [...a.sync.ownedPartitions(), ...b.sync.ownedPartitions()].sort()
      if (a.sync.ownedPartitions().length === 0 || b.sync.ownedPartitions().length === 0) return false
      if (owned.join() !== '0,1,2,3') return false
      await Promise.all([a.sync.whenCaughtUp(), b.sync.whenCaughtUp()])
      return true
    })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('each consent is synced by the owner of its partition only, and every entry is published once', async () => {
    const granted: string[] = []
    const ownerOf = (consentId: string) =>
      a.sync.ownedConsent(consentId) !== undefined
        ? 'a'
        : b.sync.ownedConsent(consentId) !== undefined
          ? 'b'
          : undefined
    // Consent ids are random: grant until both instances own at least one.
    const users = ['user1', 'user2', 'user3']
    for (let i = 0; i < 16; i++) {
      const { consentId } = await h.grantThroughGateway(
        a.sync.gatewayUrl as string,
        `customer-s${i}`,
        users[i % 3] as string,
      )
      granted.push(consentId)
      const owner = await waitFor(`the owner of consent ${consentId} to read it`, () => ownerOf(consentId))
      const owners = new Set(granted.map(ownerOf))
      expect(owner).toBeDefined()
      if (owners.has('a') && owners.has('b') && granted.length >= 3) break
    }
    expect(new Set(granted.map(ownerOf))).toEqual(new Set(['a', 'b']))

    for (const consentId of granted) {
      const instance = ownerOf(consentId) === 'a' ? a : b
      const other = instance === a ? b : a
      await h.waitForSync(instance, consentId, 0, 'synced')
      expect(other.syncs.filter((s) => s.consentId === consentId)).toEqual([])
    }
    const expected = [...a.syncs, ...b.syncs].reduce(
      (n, s) => n + (s.outcome.kind === 'synced' ? s.outcome.raw : 0),
      0,
    )
    const raw = await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'every raw event of both instances',
      (r) => r.length >= expected,
    )
    expect(raw).toHaveLength(expected)
    const refs = raw.map((r) => r.value.sourceReference)
    expect(new Set(refs).size).toBe(refs.length)
    expect(new Set(raw.map((r) => r.value.sourceReference?.split('/')[0]))).toEqual(new Set(granted))
  })
})
