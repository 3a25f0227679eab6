/** The generated entities. Any optional member is one the data has no value for. */

export type ShopType = 'bricks' | 'online'
export type CoordinatesType = 'rooftop' | 'interpolated' | 'approximate'

export interface SimCategory {
  readonly name: string
  readonly logo: string
}

export interface SimAddress {
  readonly street: string
  readonly city: string
  readonly zip: string
  readonly country: string
  /** Administrative areas by level: "20" region, "30" district. */
  readonly areas: Readonly<Record<string, string>>
}

export interface SimCoordinates {
  readonly type: CoordinatesType
  readonly lat: number
  readonly long: number
}

/** How a shop's card payments look to an issuer (what terminals send). */
export interface CardAcceptance {
  /** ISO 8583 DE 42 card acceptor id (15 digits). Shared by all shops of some chains. */
  readonly merchantId: string
  /** True when `merchantId` belongs to the merchant's central contract and so names several shops. */
  readonly merchantIdShared: boolean
  /** ISO 8583 DE 41 terminal ids (8 characters), unique across the data set. */
  readonly terminalIds: readonly string[]
  /** DE 43 name as printed, at most 25 characters: "ALBERT 0123 PRAHA 5". */
  readonly acceptorName: string
  /** DE 43 city as printed, at most 13 characters. */
  readonly acceptorCity: string
  readonly country: string
  readonly postalCode: string
  readonly mcc: string
  /** DE 32 acquiring institution id. */
  readonly acquirerId: string
}

export interface SimShop {
  readonly index: number
  readonly uid: string
  readonly type: ShopType
  readonly merchantIndex: number
  readonly merchantUid: string
  /** Position of the shop among its merchant's shops (0 is the main shop). */
  readonly ordinal: number
  readonly category: SimCategory
  readonly tags: readonly string[]
  readonly address: SimAddress
  readonly coordinates?: SimCoordinates
  readonly url: string
  readonly googlePlaceId?: string
  readonly card: CardAcceptance
}

export type BankAccount =
  | { readonly scheme: 'certis'; readonly currency: string; readonly prefix?: string; readonly number: string; readonly bankCode: string; readonly iban: string; readonly bic: string }
  | { readonly scheme: 'sepa'; readonly currency: string; readonly iban: string; readonly bic: string }
  | { readonly scheme: 'uk'; readonly currency: string; readonly sortCode: string; readonly number: string; readonly iban: string; readonly bic: string }
  | { readonly scheme: 'iban'; readonly currency: string; readonly iban: string; readonly bic: string }

export interface SimMerchant {
  readonly index: number
  readonly uid: string
  readonly name: string
  readonly logo: string
  readonly url: string
  readonly country: string
  readonly category: SimCategory
  readonly tags: readonly string[]
  readonly online: boolean
  /** Shops of this merchant are the indexes [firstShop, firstShop + shopCount). */
  readonly firstShop: number
  readonly shopCount: number
  readonly bankAccounts: readonly BankAccount[]
}
