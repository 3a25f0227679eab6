import type { CallOptions } from './bank-transport.ts'
import { InstantPaymentRefusedError, InstantPaymentRuleError } from './errors.ts'
import type { InstructionPriority, Payment, PaymentRequest } from './model/payments.ts'
import type { PaymentsClient } from './payments-client.ts'

export interface InstantFallbackOptions extends CallOptions {
  /** Priority of the re-initiated payment: `NORM` (default) or `HIGH` (express). */
  fallbackPriority?: Exclude<InstructionPriority, 'INST'>
  /**
   * The instructionIdentification of the re-initiated payment. Default: the same id, because
   * the refused instant payment was never created at the bank.
   */
  fallbackInstructionId?: (original: string) => string
}

export interface InstantFallbackResult {
  payment: Payment
  /** True when the payment was created as INST, false when it was re-initiated. */
  instant: boolean
  /** Why instant did not work: the client's rule check or the bank's 400. */
  refusal: InstantPaymentRuleError | InstantPaymentRefusedError | undefined
}

/**
 * Opt-in: creates an INST payment and, when instant is impossible (the client's instant rules
 * fail, or the bank answers 400 NO_PART), initiates the same payment again as NORM or HIGH, as
 * the bank's rules say to. Any other failure is thrown unchanged. A non-INST request is just
 * created.
 */
export async function createPaymentWithInstantFallback(
  payments: PaymentsClient,
  request: PaymentRequest,
  options: InstantFallbackOptions = {},
): Promise<InstantFallbackResult> {
  const { fallbackPriority = 'NORM', fallbackInstructionId, ...callOptions } = options
  const instant = request.paymentTypeInformation?.instructionPriority === 'INST'
  try {
    // A retry must not reuse the first attempt's X-Request-ID, so only the first call gets the caller's.
    return { payment: await payments.createPayment(request, callOptions), instant, refusal: undefined }
  } catch (err) {
    if (!instant || !(err instanceof InstantPaymentRuleError || err instanceof InstantPaymentRefusedError))
      throw err
    const { requestId: _first, ...retryOptions } = callOptions
    const id = request.paymentIdentification.instructionIdentification
    const fallback: PaymentRequest = {
      ...request,
      paymentIdentification: {
        ...request.paymentIdentification,
        instructionIdentification: fallbackInstructionId ? fallbackInstructionId(id) : id,
      },
      paymentTypeInformation: { ...request.paymentTypeInformation, instructionPriority: fallbackPriority },
    }
    return { payment: await payments.createPayment(fallback, retryOptions), instant: false, refusal: err }
  }
}
