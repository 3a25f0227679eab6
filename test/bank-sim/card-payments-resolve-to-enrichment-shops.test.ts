import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBankSim, type BankSim } from '@tep/bank-sim'
import { SimDataset, matchCard, matchTransfer } from '@tep/sim-data'
import { OpenApiContract } from './openapi-contract.ts'
import { BankSimHarness } from './bank-sim-harness.ts'

interface Tx {
  entryReference: string
  creditDebitIndicator: 'CRDT' | 'DBIT'
  bankTransactionCode: { proprietary: { code: string } }
  entryDetails: {
    transactionDetails: {
      additionalTransactionInformation?: string
      remittanceInformation?: { unstructured?: string }
      relatedParties?: { creditor?: Party; debtor?: Party; creditorAccount?: { identification?: { iban?: string; other?: { identification?: string } } } }
      relatedAgents?: { creditorAgent?: { financialInstitutionIdentification?: { clearingSystemMemberIdentification?: { memberIdentification?: string } } } }
    }
  }
}

type Party = { name?: string; postalAddress?: { townName?: string; country?: string } }

let sim: BankSim
let h: BankSimHarness
// The enrichment simulator's default data set (seed 1, 50000 shops, 5000 merchants), which bank-sim uses by default too.
const dataset = new SimDataset()

beforeAll(async () => {
  sim = await startBankSim({ seed: 'resolve', clients: 2, wallClock: () => Date.parse('2026-09-01T12:00:00Z') })
  h = new BankSimHarness(sim, new OpenApiContract())
})

afterAll(async () => {
  await sim.close()
})

async function history(): Promise<Tx[]> {
  const account = (await h.users())[0]?.accounts.find((a) => a.kind === 'CURRENT' && a.currency === 'CZK') as { id: string }
  const t = await h.consent('AISP')
  const out: Tx[] = []
  for (let page = 0; ; page++) {
    const answer = await h.api<{ transactions: Tx[]; nextPage?: number }>('GET', '/accounts/{id}/transactions', `/accounts/${account.id}/transactions?pageSize=100&page=${page}&dateFrom=2026-03-01`, t.access_token)
    out.push(...answer.body.transactions)
    if (answer.body.nextPage === undefined) return out
  }
}

describe('bank history points at the enrichment simulator data', () => {
  it('gives card payments whose terminal, acceptor id and printed name and city find the same shop', async () => {
    const cards = (await history()).filter((x) => x.bankTransactionCode.proprietary.code === '30000301000')
    expect(cards.length).toBeGreaterThan(100)
    expect(cards.some((x) => x.creditDebitIndicator === 'CRDT')).toBe(true)
    for (const tx of cards) {
      const details = tx.entryDetails.transactionDetails
      const info = details.additionalTransactionInformation as string
      const [, kind, name, city, country, mcc, tid, mid] = /^(Platba kartou|Vraceni platby kartou); (.+); (.+); ([A-Z]{2}); MCC (\d{4}); TID (\S+); MID (\S+)$/.exec(info) ?? []
      expect(kind).toBe(tx.creditDebitIndicator === 'CRDT' ? 'Vraceni platby kartou' : 'Platba kartou')
      expect({ entryReference: tx.entryReference, parsed: tid !== undefined }).toEqual({ entryReference: tx.entryReference, parsed: true })
      const byTerminal = matchCard(dataset, { terminalId: tid, merchantId: mid })
      expect(byTerminal?.rule).toBe('merchantId+terminalId')
      const shop = dataset.shop(byTerminal?.shopIndex as number)
      expect({ name, city, country, mcc }).toEqual({ name: shop.card.acceptorName, city: shop.card.acceptorCity, country: shop.card.country, mcc: shop.card.mcc })
      const shopSide = tx.creditDebitIndicator === 'CRDT' ? details.relatedParties?.debtor : details.relatedParties?.creditor
      expect(shopSide).toEqual({ name: shop.card.acceptorName, postalAddress: { townName: shop.card.acceptorCity, country: shop.card.country } })
      expect(matchCard(dataset, { description: name, city })).toBeDefined()
    }
  })

  it('gives invoice transfers whose creditor account is a merchant account of the data set', async () => {
    const invoices = (await history()).filter((x) => x.entryDetails.transactionDetails.remittanceInformation?.unstructured === 'FAKTURA')
    expect(invoices.length).toBeGreaterThan(3)
    for (const tx of invoices) {
      const details = tx.entryDetails.transactionDetails
      const ident = details.relatedParties?.creditorAccount?.identification
      const byIban = matchTransfer(dataset, 'sepa', { iban: ident?.iban })
      expect(byIban).toBeDefined()
      const [prefix, number] = (ident?.other?.identification as string).includes('-') ? (ident?.other?.identification as string).split('-') : [undefined, ident?.other?.identification]
      const byAccount = matchTransfer(dataset, 'certis', { accountPrefix: prefix, accountNumber: number, bankCode: details.relatedAgents?.creditorAgent?.financialInstitutionIdentification?.clearingSystemMemberIdentification?.memberIdentification })
      expect(byAccount?.merchantIndex).toBe(byIban?.merchantIndex)
      expect(details.relatedParties?.creditor?.name).toBe(dataset.merchant(byIban?.merchantIndex as number).name)
    }
  })
})
