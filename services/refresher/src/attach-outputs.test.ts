import { describe, expect, it } from 'vitest'
import { attachOutputs } from './attach-outputs.ts'
import type { RefreshInput } from './refresh-input.ts'

describe('attachOutputs', () => {
  it('puts each write on the last input of its key', () => {
    const inputs: RefreshInput[] = [
      { kind: 'invalidation', entity: 'shop', key: 'a', itemId: 1, type: 'update', seenAt: 0 },
      { kind: 'invalidation', entity: 'merchant', key: 'a', itemId: 2, type: 'update', seenAt: 0 },
      { kind: 'ignored', reason: 'handle-level', detail: 'h' },
      { kind: 'invalidation', entity: 'shop', key: 'a', itemId: 3, type: 'update', seenAt: 0 },
    ]
    const shopA = { entity: 'shop' as const, key: 'a', value: null }
    const merchantA = { entity: 'merchant' as const, key: 'a', value: null }
    expect(attachOutputs(inputs, [shopA, merchantA])).toEqual([[], [merchantA], [], [shopA]])
  })
})
