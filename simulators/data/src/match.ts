import { accountKeyCzech, accountKeyIban, accountKeyUk } from './dataset.ts'
import type { CardMatchRule, SimDataset } from './dataset.ts'

/** Card transaction fields used for matching; '' means "sent, but empty". */
export interface CardMatchInput {
  merchantId?: string
  terminalId?: string
  description?: string
  city?: string
}

export interface CardMatch {
  shopIndex: number
  rule: CardMatchRule
}

/** Non-empty after trimming, or undefined: an empty identifier identifies nothing. */
function present(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}

/**
 * Finds the shop of a card transaction in the base data, most specific evidence
 * first: terminal id with acceptor id, terminal id alone, an acceptor id that names
 * exactly one shop, then the printed acceptor name with its city. A terminal id
 * wins over a contradicting acceptor id because terminal ids are unique here.
 */
export function matchCard(dataset: SimDataset, input: CardMatchInput): CardMatch | undefined {
  const merchantId = present(input.merchantId)
  const terminalId = present(input.terminalId)
  if (terminalId !== undefined) {
    const shopIndex = dataset.shopIndexByTerminalId(terminalId)
    if (shopIndex !== undefined) {
      const sameAcceptor = merchantId !== undefined && dataset.merchantIdOfShop(shopIndex) === merchantId
      return { shopIndex, rule: sameAcceptor ? 'merchantId+terminalId' : 'terminalId' }
    }
  }
  if (merchantId !== undefined) {
    const named = dataset.resolveMerchantId(merchantId)
    if (named !== undefined && 'shop' in named) return { shopIndex: named.shop, rule: 'merchantId' }
    if (named !== undefined && dataset.merchant(named.merchant).shopCount === 1) {
      return { shopIndex: dataset.merchant(named.merchant).firstShop, rule: 'merchantId' }
    }
  }
  const description = present(input.description)
  const city = present(input.city)
  if (description !== undefined && city !== undefined) {
    const shopIndex = dataset.shopIndexByAcceptorName(description, city)
    if (shopIndex !== undefined) return { shopIndex, rule: 'name+city' }
  }
  return undefined
}

export type TransferScheme = 'certis' | 'sepa' | 'uk'

/** Transfer fields used for matching; '' means "sent, but empty". */
export interface TransferMatchInput {
  iban?: string
  accountPrefix?: string
  accountNumber?: string
  bankCode?: string
  sortCode?: string
}

export interface TransferMatch {
  merchantIndex: number
  rule: 'iban' | 'account'
}

/** Finds the merchant that owns the counterparty account of a transfer. */
export function matchTransfer(dataset: SimDataset, scheme: TransferScheme, input: TransferMatchInput): TransferMatch | undefined {
  const accountNumber = present(input.accountNumber)
  if (scheme === 'certis' && accountNumber !== undefined) {
    const bankCode = present(input.bankCode)
    if (bankCode !== undefined) {
      const merchantIndex = dataset.merchantIndexByAccountKey(accountKeyCzech(present(input.accountPrefix), accountNumber, bankCode))
      if (merchantIndex !== undefined) return { merchantIndex, rule: 'account' }
    }
  }
  if (scheme === 'uk' && accountNumber !== undefined) {
    const sortCode = present(input.sortCode)
    if (sortCode !== undefined) {
      const merchantIndex = dataset.merchantIndexByAccountKey(accountKeyUk(sortCode, accountNumber))
      if (merchantIndex !== undefined) return { merchantIndex, rule: 'account' }
    }
  }
  const iban = present(input.iban)
  if (iban !== undefined) {
    const merchantIndex = dataset.merchantIndexByAccountKey(accountKeyIban(iban))
    if (merchantIndex !== undefined) return { merchantIndex, rule: 'iban' }
  }
  return undefined
}
