/**
 * Czech payment-system bank codes (směrové kódy) with their BICs, as published by the
 * Czech National Bank in its list of bank codes (kody_bank_CR.csv). A domestic payment
 * without an IBAN is valid only to one of these. The list changes rarely; refresh it from
 * the CNB when a bank enters or leaves the clearing system.
 */
export interface CzechBank {
  readonly code: string
  readonly bic: string | undefined
  readonly name: string
}

const BANKS: readonly CzechBank[] = [
  ['0100', 'KOMBCZPP', 'Komerční banka'],
  ['0300', 'CEKOCZPP', 'Československá obchodní banka'],
  ['0600', 'AGBACZPP', 'MONETA Money Bank'],
  ['0710', 'CNBACZPP', 'Česká národní banka'],
  ['0800', 'GIBACZPX', 'Česká spořitelna'],
  ['2010', 'FIOBCZPP', 'Fio banka'],
  ['2060', 'CITFCZPP', 'Citfin, spořitelní družstvo'],
  ['2070', 'MPUBCZPP', 'TRINITY BANK'],
  ['2100', undefined, 'ČSOB Hypoteční banka'],
  ['2200', undefined, 'Peněžní dům, spořitelní družstvo'],
  ['2220', 'ARTTCZPP', 'Artesa, spořitelní družstvo'],
  ['2250', 'CTASCZ22', 'Banka CREDITAS'],
  ['2260', undefined, 'NEY spořitelní družstvo'],
  ['2275', undefined, 'Podnikatelská družstevní záložna'],
  ['2600', 'CITICZPX', 'Citibank Europe, organizační složka'],
  ['2700', 'BACXCZPP', 'UniCredit Bank Czech Republic and Slovakia'],
  ['3030', 'AIRACZPP', 'Air Bank'],
  ['3050', 'BPPFCZP1', 'BNP Paribas Personal Finance, odštěpný závod'],
  ['3060', 'BPKOCZPP', 'PKO BP, Czech Branch'],
  ['3500', 'INGBCZPP', 'ING Bank'],
  ['4000', 'EXPNCZPP', 'Max banka'],
  ['4300', 'NROZCZPP', 'Národní rozvojová banka'],
  ['5500', 'RZBCCZPP', 'Raiffeisenbank'],
  ['5800', 'JTBPCZPP', 'J&T BANKA'],
  ['6000', 'PMBPCZPP', 'PPF banka'],
  ['6200', 'COBACZPX', 'COMMERZBANK, pobočka Praha'],
  ['6210', 'BREXCZPP', 'mBank, organizační složka'],
  ['6300', 'GEBACZPP', 'BNP Paribas, pobočka Česká republika'],
  ['6363', undefined, 'Partners Banka'],
  ['6700', 'SUBACZPP', 'Všeobecná úverová banka, pobočka Praha'],
  ['6800', 'VBOECZ2X', 'Sberbank CZ v likvidaci'],
  ['7910', 'DEUTCZPX', 'Deutsche Bank Filiale Prag'],
  ['7950', undefined, 'Raiffeisen stavební spořitelna'],
  ['7960', undefined, 'ČSOB Stavební spořitelna'],
  ['7970', undefined, 'MONETA Stavební Spořitelna'],
  ['7990', undefined, 'Modrá pyramida stavební spořitelna'],
  ['8030', 'GENOCZ21', 'Volksbank Raiffeisenbank Nordoberpfalz, pobočka Cheb'],
  ['8040', 'OBKLCZ2X', 'Oberbank, pobočka Česká republika'],
  ['8060', undefined, 'Stavební spořitelna České spořitelny'],
  ['8090', 'CZEECZPP', 'Česká exportní banka'],
  ['8150', 'MIDLCZPP', 'HSBC Continental Europe, Czech Republic'],
  ['8190', undefined, 'Sparkasse Oberlausitz-Niederschlesien'],
  ['8198', 'FFCSCZP1', 'FAS finance company'],
  ['8220', 'PAERCZP1', 'Payment execution'],
  ['8250', 'BKCHCZPP', 'Bank of China (CEE), Prague Branch'],
  ['8255', 'COMMCZPP', 'Bank of Communications, Prague Branch'],
  ['8265', 'ICBKCZPP', 'Industrial and Commercial Bank of China, Prague Branch'],
  ['8280', 'BEFKCZP1', 'B-Efekt'],
  ['8500', undefined, 'Multitude Bank'],
].map(([code, bic, name]) => ({ code: code!, bic, name: name! }))

const BY_CODE: ReadonlyMap<string, CzechBank> = new Map(BANKS.map((b) => [b.code, b]))

/** Every known bank code, for callers that render a picker. */
export const CZECH_BANKS: readonly CzechBank[] = BANKS

/** The bank code of this bank (Raiffeisenbank); payments to it are internal. */
export const OWN_BANK_CODE = '5500'

export function czechBank(code: string): CzechBank | undefined {
  return BY_CODE.get(code)
}

export function isCzechBankCode(code: string): boolean {
  return BY_CODE.has(code)
}
