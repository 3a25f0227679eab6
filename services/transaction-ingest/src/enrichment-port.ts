import type { CardLookupInput, TransferLookupInput, TransferScheme } from './lookup-input.ts'

/**
 * The part of @tep/enrichment-client this service uses, as a structural type so
 * that unit tests can pass a fake and the service does not depend on the
 * client's internals.
 */
export type FindOutcome =
  | { status: 'found'; handle: string | undefined; shopUid: string }
  | { status: 'notFound'; handle: string | undefined }

export interface InvalidEntry {
  status: 'invalid'
  error: { code: string | undefined; message: string | undefined; parameter: string | undefined }
}

export type BatchEntry = FindOutcome | InvalidEntry

export interface ApiShop {
  uid: string
  type?: string
  merchantUid?: string
  tags?: string[]
  category?: { name?: string; logo?: string }
  location?: {
    address?: {
      street?: string
      city?: string
      zip?: string
      country?: string
      areas?: Record<string, string>
    }
    coordinates?: { type?: string; lat?: number; long?: number }
  }
  url?: string
  googlePlaceId?: string
}

export interface ApiMerchant {
  uid: string
  name?: string
  logo?: string
  url?: string
  category?: { name?: string; logo?: string }
}

/** Answer of a `complete` lookup: a found result carries the full shop and, when sent, its merchant. */
export type CompleteFindOutcome =
  | {
      status: 'found'
      handle: string | undefined
      shopUid: string
      shop: ApiShop
      merchant: ApiMerchant | undefined
    }
  | { status: 'notFound'; handle: string | undefined }

export type CompleteBatchEntry = CompleteFindOutcome | InvalidEntry

export interface CallOptions {
  signal?: AbortSignal
}

export interface EnrichmentPort {
  findByCardTransaction(input: CardLookupInput, options?: CallOptions): Promise<FindOutcome>
  findByCardTransactionBatch(inputs: CardLookupInput[], options?: CallOptions): Promise<BatchEntry[]>
  completeFindByCardTransaction(input: CardLookupInput, options?: CallOptions): Promise<CompleteFindOutcome>
  completeFindByCardTransactionBatch(
    inputs: CardLookupInput[],
    options?: CallOptions,
  ): Promise<CompleteBatchEntry[]>
  findByBankTransfer(
    scheme: TransferScheme,
    input: TransferLookupInput,
    options?: CallOptions,
  ): Promise<FindOutcome>
  getShop(uid: string, options?: CallOptions): Promise<ApiShop>
  getMerchant(uid: string, options?: CallOptions): Promise<ApiMerchant>
}
