import type {
  ApiMerchant,
  ApiShop,
  BatchEntry,
  CompleteBatchEntry,
  CompleteFindOutcome,
  EnrichmentPort,
  FindOutcome,
} from './enrichment-port.ts'
import type { CardLookupInput, TransferLookupInput, TransferScheme } from './lookup-input.ts'

/** A scriptable EnrichmentPort for unit tests: every call is recorded, answers come from the handlers. */
export class FakeEnrichment implements EnrichmentPort {
  readonly calls: { op: string; arg: unknown }[] = []
  single: (input: CardLookupInput) => Promise<FindOutcome> = async () => ({
    status: 'notFound',
    handle: undefined,
  })
  batch: (inputs: CardLookupInput[]) => Promise<BatchEntry[]> = async (inputs) =>
    inputs.map(() => ({ status: 'notFound', handle: undefined }))
  completeSingle: (input: CardLookupInput) => Promise<CompleteFindOutcome> = async () => ({
    status: 'notFound',
    handle: undefined,
  })
  completeBatch: (inputs: CardLookupInput[]) => Promise<CompleteBatchEntry[]> = async (inputs) =>
    inputs.map(() => ({ status: 'notFound', handle: undefined }))
  transfer: (scheme: TransferScheme, input: TransferLookupInput) => Promise<FindOutcome> = async () => ({
    status: 'notFound',
    handle: undefined,
  })
  shop: (uid: string) => Promise<ApiShop> = async (uid) => ({ uid })
  merchant: (uid: string) => Promise<ApiMerchant> = async (uid) => ({ uid })

  findByCardTransaction(input: CardLookupInput): Promise<FindOutcome> {
    this.calls.push({ op: 'single', arg: input })
    return this.single(input)
  }
  findByCardTransactionBatch(inputs: CardLookupInput[]): Promise<BatchEntry[]> {
    this.calls.push({ op: 'batch', arg: inputs })
    return this.batch(inputs)
  }
  completeFindByCardTransaction(input: CardLookupInput): Promise<CompleteFindOutcome> {
    this.calls.push({ op: 'completeSingle', arg: input })
    return this.completeSingle(input)
  }
  completeFindByCardTransactionBatch(inputs: CardLookupInput[]): Promise<CompleteBatchEntry[]> {
    this.calls.push({ op: 'completeBatch', arg: inputs })
    return this.completeBatch(inputs)
  }
  findByBankTransfer(scheme: TransferScheme, input: TransferLookupInput): Promise<FindOutcome> {
    this.calls.push({ op: `transfer/${scheme}`, arg: input })
    return this.transfer(scheme, input)
  }
  getShop(uid: string): Promise<ApiShop> {
    this.calls.push({ op: 'getShop', arg: uid })
    return this.shop(uid)
  }
  getMerchant(uid: string): Promise<ApiMerchant> {
    this.calls.push({ op: 'getMerchant', arg: uid })
    return this.merchant(uid)
  }
  count(op: string): number {
    return this.calls.filter((c) => c.op === op).length
  }
}
