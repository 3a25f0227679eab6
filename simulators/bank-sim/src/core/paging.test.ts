import { describe, expect, it } from 'vitest'
import { paginate, intParam } from './paging.ts'
import { BankApiError } from '../errors.ts'

const items = Array.from({ length: 30 }, (_, i) => i)

describe('COBS paging', () => {
  it('has no extra empty page when the total is an exact multiple of the page size', () => {
    const last = paginate(items, 2, 10)
    expect(last).toMatchObject({ pageNumber: 2, pageCount: 3, pageSize: 10, totalCount: 30 })
    expect(last.nextPage).toBeUndefined()
    expect(last.items).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29])
    expect(paginate(items, 1, 10).nextPage).toBe(2)
    expect(() => paginate(items, 3, 10)).toThrow(BankApiError)
  })

  it('gives a short last page otherwise', () => {
    const last = paginate(items, 2, 12)
    expect(last.items).toHaveLength(6)
    expect(last.pageCount).toBe(3)
  })

  it('answers page 0 of an empty result with an empty list and pageCount 0', () => {
    expect(paginate([], 0, 10)).toEqual({ pageNumber: 0, pageCount: 0, pageSize: 10, totalCount: 0, items: [] })
    expect(() => paginate([], 1, 10)).toThrow(/page 1 does not exist/)
  })

  it('refuses malformed and out-of-range integers as PARAMETER_INVALID', () => {
    expect(intParam(undefined, 'pageSize', 10, 100)).toBeUndefined()
    expect(intParam('10', 'pageSize', 10, 100)).toBe(10)
    for (const bad of ['9', '101', '1.5', 'ten', '-1']) {
      try {
        intParam(bad, 'pageSize', 10, 100)
        expect.unreachable(`${bad} was accepted`)
      } catch (err) {
        expect((err as BankApiError).body().errors[0]).toMatchObject({ error: 'PARAMETER_INVALID', scope: 'pageSize' })
      }
    }
  })
})
