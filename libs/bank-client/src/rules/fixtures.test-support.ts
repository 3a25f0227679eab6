import type { PaymentRequest } from '../model/payments.ts'

/** Valid IBANs (correct check digits) for rule tests. */
export const IBAN = {
  rbLiteralPrefix: 'CZ3155000000000000000043',
  rbOther: 'CZ7155000000001234567890',
  cs: 'CZ6508000000192000145399',
  kb: 'CZ1801000000000123456789',
  de: 'DE89370400440532013000',
  at: 'AT611904300234573201',
  tr: 'TR330006100519786457841326',
} as const

export function payment(overrides: Partial<PaymentRequest> = {}): PaymentRequest {
  return {
    paymentIdentification: { instructionIdentification: 'tpp-1' },
    amount: { instructedAmount: { value: '1500.00', currency: 'CZK' } },
    debtorAccount: { identification: { iban: IBAN.rbOther }, currency: 'CZK' },
    creditorAccount: { identification: { iban: IBAN.cs } },
    ...overrides,
  }
}
