/**
 * Banks whose accounts the generated merchants hold, and the card acquirers whose
 * terminals they use. Bank codes and BICs are the real public identifiers; the
 * acquirer ids are invented.
 */
export interface BankDef {
  readonly country: string
  /** National bank code (CZ/SK 4 digits, DE BLZ 8 digits, AT 5 digits, PL 8 digits, GB 4-letter bank id). */
  readonly code: string
  readonly bic: string
  /** GB only: sort code prefix (first 2 digits). */
  readonly sortPrefix?: string
}

export const BANKS: readonly BankDef[] = [
  { country: 'CZ', code: '0800', bic: 'GIBACZPX' }, { country: 'CZ', code: '0100', bic: 'KOMBCZPP' },
  { country: 'CZ', code: '0300', bic: 'CEKOCZPP' }, { country: 'CZ', code: '2010', bic: 'FIOBCZPP' },
  { country: 'CZ', code: '0600', bic: 'AGBACZPP' }, { country: 'CZ', code: '5500', bic: 'RZBCCZPP' },
  { country: 'CZ', code: '2700', bic: 'BACXCZPP' }, { country: 'CZ', code: '3030', bic: 'AIRACZPP' },
  { country: 'CZ', code: '6210', bic: 'BREXCZPP' },
  { country: 'SK', code: '0900', bic: 'GIBASKBX' }, { country: 'SK', code: '1100', bic: 'TATRSKBX' },
  { country: 'SK', code: '0200', bic: 'SUBASKBX' }, { country: 'SK', code: '7500', bic: 'CEKOSKBX' },
  { country: 'DE', code: '10070000', bic: 'DEUTDEBBXXX' }, { country: 'DE', code: '10040000', bic: 'COBADEBBXXX' },
  { country: 'DE', code: '70020270', bic: 'HYVEDEMMXXX' },
  { country: 'AT', code: '20111', bic: 'GIBAATWWXXX' }, { country: 'AT', code: '12000', bic: 'BKAUATWWXXX' },
  { country: 'AT', code: '32000', bic: 'RLNWATWWXXX' },
  { country: 'PL', code: '10201026', bic: 'BPKOPLPW' }, { country: 'PL', code: '11402004', bic: 'BREXPLPW' },
  { country: 'PL', code: '10901014', bic: 'WBKPPLPP' },
  { country: 'GB', code: 'NWBK', bic: 'NWBKGB2L', sortPrefix: '60' }, { country: 'GB', code: 'BARC', bic: 'BARCGB22', sortPrefix: '20' },
  { country: 'GB', code: 'LOYD', bic: 'LOYDGB2L', sortPrefix: '30' }, { country: 'GB', code: 'HBUK', bic: 'HBUKGB4B', sortPrefix: '40' },
]

export function banksOf(country: string): readonly BankDef[] {
  return BANKS.filter((bank) => bank.country === country)
}

export interface AcquirerDef {
  /** ISO 8583 DE 32 acquiring institution id. */
  readonly id: string
  /** Two letters that prefix the terminal ids this acquirer issues. */
  readonly terminalPrefix: string
  readonly name: string
}

export const ACQUIRERS: readonly AcquirerDef[] = [
  { id: '401834', terminalPrefix: 'CS', name: 'Česká spořitelna Acquiring' },
  { id: '423109', terminalPrefix: 'KB', name: 'Komerční banka Acquiring' },
  { id: '445512', terminalPrefix: 'GP', name: 'Global Payments Europe' },
  { id: '476220', terminalPrefix: 'WL', name: 'Worldline' },
  { id: '489315', terminalPrefix: 'AD', name: 'Adyen' },
  { id: '453876', terminalPrefix: 'SU', name: 'SumUp' },
]
