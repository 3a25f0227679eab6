import { afterEach, describe, expect, it } from 'vitest'
import { BankProtocolError } from './errors.ts'
import { startFakeBank, type FakeBank } from './fake-bank.test-support.ts'

let bank: FakeBank | undefined
afterEach(async () => {
  await bank?.close()
  bank = undefined
})

describe('paging numbers the description does not type', () => {
  it('reads pageNumber, pageCount and pageSize sent as strings of digits, reporting each', async () => {
    bank = await startFakeBank((_m, path) =>
      path === '/accounts'
        ? {
            status: 200,
            body: {
              pageNumber: '0',
              pageCount: '1',
              pageSize: '100',
              nextPage: null,
              accounts: [{ id: 'a-1' }],
            },
          }
        : { status: 404 },
    )
    const accounts = await bank.client.accounts.listAccounts()
    expect(accounts.map((a) => a.id)).toEqual(['a-1'])
    expect(bank.drifts.map((d) => `${d.operation} ${d.field} ${d.kind}`)).toEqual([
      'bank.accounts.listAccounts pageNumber type',
      'bank.accounts.listAccounts pageCount type',
      'bank.accounts.listAccounts pageSize type',
    ])
  })

  it('follows nextPage given as a string', async () => {
    bank = await startFakeBank((_m, path) => ({
      status: 200,
      body:
        bank?.requests.length === 1
          ? { pageNumber: 0, pageCount: 2, nextPage: '1', transactions: [{ entryReference: 'A' }] }
          : { pageNumber: 1, pageCount: 2, transactions: [{ entryReference: 'B' }], path },
    }))
    const refs: unknown[] = []
    for await (const t of bank.client.accounts.transactions('acc', { pageSize: 10 }))
      refs.push(t.entryReference)
    expect(refs).toEqual(['A', 'B'])
  })

  it('still refuses paging it cannot follow', async () => {
    bank = await startFakeBank(() => ({
      status: 200,
      body: { pageNumber: 'first', pageCount: 1, accounts: [] },
    }))
    await expect(bank.client.accounts.listAccounts()).rejects.toBeInstanceOf(BankProtocolError)
  })
})
