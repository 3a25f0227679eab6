import type { Consent } from '@tep/schemas'
import type { AssociatedData, TokenCipher } from '@tep/token-cipher'

/**
 * What a consent's sealed tokens are bound to (the GCM associated data): its consentId AND
 * its customerId. A record produced to `bank.consents.v1` that moves a victim's sealed
 * tokens under another customerId (same consentId, new customer) does not decrypt, so
 * bank-sync never syncs the victim's accounts under the other customer.
 */
export function consentBinding(consent: Pick<Consent, 'consentId' | 'customerId'>): AssociatedData {
  return [consent.consentId, consent.customerId]
}

/**
 * The binding of every envelope written before the customer binding (the consentId alone).
 * Still accepted, flagged, and sealed again with {@link consentBinding} on the consent's next
 * write; remove it once `bank_sync_legacy_token_bindings_total` has stayed 0 for a full sync
 * round after the upgrade (docs/security.md, "Consent tokens bound to their customer").
 */
export function legacyConsentBinding(consent: Pick<Consent, 'consentId'>): AssociatedData {
  return consent.consentId
}

/** Seals one token of `consent` with the current binding. */
export function sealConsentToken(cipher: TokenCipher, token: string, consent: Pick<Consent, 'consentId' | 'customerId'>): string {
  return cipher.encrypt(token, consentBinding(consent))
}

export interface OpenedToken {
  readonly token: string
  /** Sealed with the legacy binding: seal it again on the next write. */
  readonly legacy: boolean
}

/** Opens one sealed token of `consent`: the current binding, else the legacy one (flagged). */
export function openConsentToken(cipher: TokenCipher, envelope: string, consent: Pick<Consent, 'consentId' | 'customerId'>): OpenedToken {
  const opened = cipher.decryptMigrating(envelope, consentBinding(consent), legacyConsentBinding(consent))
  return { token: opened.plaintext, legacy: opened.legacy }
}

/**
 * The envelope sealed again when it needs it: with the active key (key rotation) and with the
 * current binding (a legacy envelope). An envelope that opens with neither binding is kept as
 * it is: the sync that reads it refuses it, and nothing is written from it.
 */
export function resealConsentToken(cipher: TokenCipher, envelope: string, consent: Pick<Consent, 'consentId' | 'customerId'>): string {
  let opened: OpenedToken
  try {
    opened = openConsentToken(cipher, envelope, consent)
  } catch {
    return envelope
  }
  if (!opened.legacy && !cipher.needsReencryption(envelope)) return envelope
  return sealConsentToken(cipher, opened.token, consent)
}
