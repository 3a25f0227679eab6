import { describe, expect, it } from 'vitest'
import { BankInvalidArgumentError } from '../errors.ts'
import { assertPageNumber, assertPageSize } from './page-size.ts'

describe('page size', () => {
  it.each([10, 55, 100])('accepts %i', (n) => expect(() => assertPageSize(n)).not.toThrow())
  it.each([9, 101, 0, -1, 10.5, Number.NaN])('refuses %s with the bounds in the message', (n) => {
    expect(() => assertPageSize(n)).toThrow(BankInvalidArgumentError)
    expect(() => assertPageSize(n)).toThrow(/pageSize must be an integer from 10 to 100/)
  })
  it('checks 0-based page numbers', () => {
    expect(() => assertPageNumber(0)).not.toThrow()
    expect(() => assertPageNumber(-1)).toThrow(/0-based/)
  })
})
