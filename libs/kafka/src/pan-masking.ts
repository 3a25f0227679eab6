/**
 * Card-number masking of DLQ records (keys, values, headers, reasons). One
 * implementation for the DLQ and the logs, in @tep/observability's pan-masking.ts:
 * two copies had drifted apart before, and both let grouped card numbers through.
 */
export { findPanDigits, maskPans, maskPansInText } from '@tep/observability'
