import type { InputValue, RefreshValue } from './input-encoding.ts'

/** Bank-transfer lookup schemes offered by the API. */
export type TransferScheme = 'certis' | 'sepa' | 'uk'

interface TransferCommon {
  /** Counterparty name as shown on the statement (wire name `name`). */
  name?: InputValue
  amount?: InputValue
  currency?: InputValue
  refresh?: RefreshValue
}

/** Czech domestic transfer (CERTIS). Needs `accountNumber` (+ `bankCode`) or `iban`. */
export interface CertisTransferInput extends TransferCommon {
  accountPrefix?: InputValue
  accountNumber?: InputValue
  bankCode?: InputValue
  iban?: InputValue
  variableSymbol?: InputValue
  constantSymbol?: InputValue
  specificSymbol?: InputValue
  message?: InputValue
}

/** SEPA credit transfer in EUR. Needs `iban`. */
export interface SepaTransferInput extends TransferCommon {
  iban?: InputValue
  bic?: InputValue
  remittanceInformation?: InputValue
  endToEndId?: InputValue
}

/** UK BACS / Faster Payments. Needs `sortCode` + `accountNumber`, or `iban`. */
export interface UkTransferInput extends TransferCommon {
  sortCode?: InputValue
  accountNumber?: InputValue
  iban?: InputValue
  reference?: InputValue
}

export interface TransferInputByScheme {
  certis: CertisTransferInput
  sepa: SepaTransferInput
  uk: UkTransferInput
}

/** Wire fields per scheme, in the order they are sent. */
export const TRANSFER_INPUT_FIELDS: {
  readonly [S in TransferScheme]: ReadonlyArray<keyof TransferInputByScheme[S]>
} = {
  certis: [
    'accountPrefix',
    'accountNumber',
    'bankCode',
    'iban',
    'name',
    'variableSymbol',
    'constantSymbol',
    'specificSymbol',
    'message',
    'amount',
    'currency',
    'refresh',
  ],
  sepa: ['iban', 'bic', 'name', 'remittanceInformation', 'endToEndId', 'amount', 'currency', 'refresh'],
  uk: ['sortCode', 'accountNumber', 'iban', 'name', 'reference', 'amount', 'currency', 'refresh'],
}

export const TRANSFER_SCHEMES: readonly TransferScheme[] = ['certis', 'sepa', 'uk']
