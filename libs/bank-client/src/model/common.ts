import type { Amount } from '../money.ts'

/**
 * Shapes follow the Czech Open Banking Standard (COBS) as the bank uses it. Only the
 * fields this client reads or checks are typed; everything else the bank sends is kept
 * (index signatures), and unknown enum values are allowed (`string & {}`) so that a new
 * code from the bank never breaks parsing.
 */
export type Open<T extends string> = T | (string & {})

export interface PostalAddress {
  streetName?: string
  buildingNumber?: string
  postCode?: string
  townName?: string
  country?: string
  addressLine?: string[]
}

export interface AccountReference {
  identification: {
    iban?: string
    /** National account number, e.g. `19-2000145399/0800`. */
    other?: { identification: string }
  }
  /** Currency bucket of a multi-currency account. */
  currency?: string
  [key: string]: unknown
}

export interface FinancialInstitution {
  financialInstitutionIdentification: {
    bic?: string
    clearingSystemMemberIdentification?: {
      memberIdentification: string
      clearingSystemIdentification?: unknown
    }
    name?: string
    postalAddress?: PostalAddress
  }
}

export interface Party {
  name?: string
  postalAddress?: PostalAddress
  [key: string]: unknown
}

export interface RemittanceInformation {
  unstructured?: string
  structured?: { creditorReferenceInformation?: { reference?: string[] } }
}

export interface InstructedAmount {
  instructedAmount: Amount
}

/** `{ pageNumber, pageCount, pageSize, nextPage?, totalCount? }` of every paged COBS answer. */
export interface PageInfo {
  pageNumber: number
  pageCount: number
  pageSize: number
  nextPage?: number | null
  totalCount?: number
}
