import { PipelineError } from '@tep/errors'

/** Root of every error @tep/token-cipher throws. None is retriable: the same input fails the same way. */
export class TokenCipherError extends PipelineError {}

/** A key or keyring from configuration is unusable (wrong length, bad base64, bad id, duplicate id). */
export class TokenKeyConfigError extends TokenCipherError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'TOKEN_KEY_CONFIG_INVALID', details })
  }
}

/** The text is not a token envelope this library can read (wrong shape or unsupported version). */
export class TokenEnvelopeMalformedError extends TokenCipherError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'TOKEN_ENVELOPE_MALFORMED', details })
  }
}

/** The envelope names a key id that is not in the keyring (rotated out too early, or another environment's key). */
export class TokenKeyUnknownError extends TokenCipherError {
  constructor(keyId: string, known: readonly string[]) {
    super(
      `token envelope was encrypted with key id "${keyId}", which is not in the keyring (known: ${known.join(', ')}); ` +
        'keep retired keys in the keyring until every stored token has been re-encrypted',
      { code: 'TOKEN_KEY_UNKNOWN', details: { keyId, knownKeyIds: [...known] } },
    )
  }
}

/**
 * Authentication failed: the ciphertext, iv, tag or key id was altered, the key is wrong,
 * or the envelope belongs to another associated-data value (e.g. another consent).
 */
export class TokenDecryptionError extends TokenCipherError {
  constructor(keyId: string, cause?: unknown) {
    super(
      `token envelope failed authentication with key "${keyId}": it was tampered with, ` +
        'or it was encrypted for a different consent (associated data mismatch)',
      { code: 'TOKEN_DECRYPTION_FAILED', details: { keyId }, cause },
    )
  }
}
