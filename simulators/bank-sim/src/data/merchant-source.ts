import { Rng } from '../core/random.ts'
import { czechAccountNumber, czechIban, czechBank } from '../core/bank-codes.ts'

/** A shop as its card terminal presents it to the card issuer (what ends up on a statement). */
export interface CardShop {
  shopUid: string
  merchantUid: string
  terminalId: string
  /** ISO 8583 DE 42 card acceptor id. */
  cardAcceptorId: string
  /** DE 43 name as printed by the terminal, at most 25 characters. */
  acceptorName: string
  /** DE 43 city, at most 13 characters. */
  acceptorCity: string
  country: string
  mcc: string
}

/** A merchant's bank account that customers pay invoices to. */
export interface MerchantPayee {
  merchantUid: string
  name: string
  iban: string
  bic: string
  bankCode?: string
  prefix?: string
  number?: string
  currency: string
}

/**
 * Where card payments and merchant transfers point to. The enrichment simulator's
 * data (`@tep/sim-data`) is the intended source so that every card payment the
 * bank shows resolves to a shop there; the built-in catalogue below keeps the
 * bank simulator usable on its own. Implementations must be deterministic.
 */
export interface MerchantSource {
  readonly name: string
  shopCount(): number
  shop(index: number): CardShop
  payeeCount(): number
  payee(index: number): MerchantPayee
}

interface Chain {
  name: string
  printed: string
  mcc: string
  cities: readonly string[]
  country: string
}

const CHAINS: readonly Chain[] = [
  { name: 'Albert Ceska republika', printed: 'ALBERT', mcc: '5411', cities: ['PRAHA', 'BRNO', 'OSTRAVA', 'PLZEN'], country: 'CZ' },
  { name: 'Lidl Ceska republika', printed: 'LIDL DEKUJE ZA NAKUP', mcc: '5411', cities: ['PRAHA', 'BRNO', 'OLOMOUC'], country: 'CZ' },
  { name: 'Kaufland Ceska republika', printed: 'KAUFLAND', mcc: '5411', cities: ['PRAHA', 'LIBEREC', 'PARDUBICE'], country: 'CZ' },
  { name: 'Dr. Max Lekarna', printed: 'DR.MAX LEKARNA', mcc: '5912', cities: ['PRAHA', 'BRNO'], country: 'CZ' },
  { name: 'Benzina', printed: 'BENZINA CS', mcc: '5541', cities: ['PRAHA', 'JIHLAVA', 'BRNO'], country: 'CZ' },
  { name: 'Costa Coffee', printed: 'COSTA COFFEE', mcc: '5814', cities: ['PRAHA'], country: 'CZ' },
  { name: 'Restaurace U Zlateho tygra', printed: 'U ZLATEHO TYGRA', mcc: '5812', cities: ['PRAHA'], country: 'CZ' },
  { name: 'Alza.cz', printed: 'ALZA.CZ', mcc: '5732', cities: ['PRAHA'], country: 'CZ' },
  { name: 'IKEA Ceska republika', printed: 'IKEA', mcc: '5712', cities: ['PRAHA', 'BRNO', 'OSTRAVA'], country: 'CZ' },
  { name: 'Ceske drahy', printed: 'CD TICKET', mcc: '4112', cities: ['PRAHA', 'BRNO'], country: 'CZ' },
  { name: 'Billa', printed: 'BILLA', mcc: '5411', cities: ['WIEN', 'GRAZ'], country: 'AT' },
  { name: 'Rewe Markt', printed: 'REWE MARKT', mcc: '5411', cities: ['MUENCHEN', 'DRESDEN'], country: 'DE' },
]

/**
 * Built-in catalogue: a dozen chains with a few shops each. ASSUMPTION: used
 * until `@tep/sim-data` is wired in; its shops do not exist in the enrichment simulator.
 */
export function builtInMerchantSource(seed: string): MerchantSource {
  const shops: CardShop[] = []
  const payees: MerchantPayee[] = []
  CHAINS.forEach((chain, ci) => {
    const rng = Rng.of(seed, 'chain', ci)
    const merchantUid = `m-builtin-${ci}`
    const acceptorId = rng.digits(15)
    chain.cities.forEach((city, si) => {
      const store = String(rng.int(1, 999)).padStart(4, '0')
      const printed = chain.printed.length + 5 <= 25 ? `${chain.printed} ${store}` : chain.printed.slice(0, 25)
      shops.push({
        shopUid: `s-builtin-${ci}-${si}`,
        merchantUid,
        terminalId: `T${rng.digits(7)}`,
        cardAcceptorId: acceptorId,
        acceptorName: printed,
        acceptorCity: city.slice(0, 13),
        country: chain.country,
        mcc: chain.mcc,
      })
    })
    if (chain.country === 'CZ') {
      const bank = rng.pick(['0100', '0300', '0800', '2700', '5500'])
      const number = czechAccountNumber(rng.digits(8))
      payees.push({
        merchantUid,
        name: chain.name,
        iban: czechIban(bank, '', number),
        bic: czechBank(bank)?.bic ?? 'UNKNOWNX',
        bankCode: bank,
        number,
        currency: 'CZK',
      })
    }
  })
  return {
    name: 'built-in',
    shopCount: () => shops.length,
    shop: (i) => shops[i % shops.length] as CardShop,
    payeeCount: () => payees.length,
    payee: (i) => payees[i % payees.length] as MerchantPayee,
  }
}
