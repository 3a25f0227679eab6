import { describe, expect, it } from 'vitest'
import { merchantSnapshotData, shopSnapshotData } from './event-snapshots.ts'

describe('event snapshots', () => {
  it('maps every absent value of a shop answer to null and keeps present ones', () => {
    expect(shopSnapshotData({ uid: 's1', location: { address: { city: 'Praha' } } })).toEqual({
      uid: 's1',
      type: null,
      tags: null,
      merchantUid: null,
      category: null,
      location: { address: { street: null, city: 'Praha', zip: null, country: null, areas: null }, coordinates: null },
      url: null,
      googlePlaceId: null,
    })
  })

  it('keys the snapshot by the uid asked for when given', () => {
    expect(shopSnapshotData({ uid: 'other' }, 's1').uid).toBe('s1')
    expect(merchantSnapshotData({ uid: 'm1', name: 'Albert', category: { name: 'Groceries' } })).toEqual({
      uid: 'm1',
      name: 'Albert',
      logo: null,
      url: null,
      categoryName: 'Groceries',
    })
  })
})
