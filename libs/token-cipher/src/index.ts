export { TokenCipher, parseEnvelope } from './token-cipher.ts'
export type { AssociatedData, EnvelopeParts, MigratingDecryption } from './token-cipher.ts'
export { createKeyring, parseKeyring, decodeKey, fingerprintKeyId } from './keyring.ts'
export type { Keyring, TokenKey } from './keyring.ts'
export {
  TokenCipherError,
  TokenKeyConfigError,
  TokenEnvelopeMalformedError,
  TokenKeyUnknownError,
  TokenDecryptionError,
} from './errors.ts'
