import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { TokenDecryptionError, TokenEnvelopeMalformedError, TokenKeyUnknownError } from './errors.ts'
import type { Keyring } from './keyring.ts'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16
const B64URL = /^[A-Za-z0-9_-]*$/

/**
 * What an envelope is bound to. A string is used as it is (the form every envelope written
 * before the customer binding used: the consentId alone). A list is several values bound
 * together, each prefixed with its UTF-8 length, so no two different lists give the same bytes
 * (`['a.b', 'c']` and `['a', 'b.c']` stay apart) and no list gives the bytes of a string.
 */
export type AssociatedData = string | readonly string[]

/** The result of {@link TokenCipher.decryptMigrating}: the plaintext and whether the legacy binding opened it. */
export interface MigratingDecryption {
  readonly plaintext: string
  /** True when only the legacy binding authenticated: seal the token again with the current one. */
  readonly legacy: boolean
}

export interface EnvelopeParts {
  readonly version: string
  readonly keyId: string
  readonly iv: Buffer
  readonly ciphertext: Buffer
  readonly tag: Buffer
}

/**
 * AES-256-GCM for tokens at rest. Envelope: `v1.<keyId>.<iv>.<ciphertext>.<tag>`, parts in
 * base64url without padding.
 *
 * The GCM associated data is `v1.<keyId>.<associatedData>`, so neither the version, nor the key
 * id, nor the binding (e.g. the consentId) can be changed without failing authentication: a token
 * copied onto another consent record does not decrypt.
 */
export class TokenCipher {
  readonly #keyring: Keyring

  constructor(keyring: Keyring) {
    this.#keyring = keyring
  }

  get activeKeyId(): string {
    return this.#keyring.active.id
  }

  encrypt(plaintext: string, associatedData: AssociatedData): string {
    const { id, key } = this.#keyring.active
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(aad(id, associatedData))
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    const tag = cipher.getAuthTag()
    return [VERSION, id, b64(iv), b64(ciphertext), b64(tag)].join('.')
  }

  decrypt(envelope: string, associatedData: AssociatedData): string {
    const parts = parseEnvelope(envelope)
    const entry = this.#keyring.keys.get(parts.keyId)
    if (!entry) {
      // A key listed without its id (`new:KEY,OLDKEY`) gets a fingerprint id, not the id
      // its envelopes carry (`k1`): try each key; GCM authentication tells the right one.
      for (const candidate of this.#keyring.keys.values()) {
        const plain = tryDecrypt(candidate.key, parts, associatedData)
        if (plain !== undefined) return plain
      }
      throw new TokenKeyUnknownError(parts.keyId, [...this.#keyring.keys.keys()])
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, parts.iv, { authTagLength: TAG_BYTES })
      decipher.setAAD(aad(parts.keyId, associatedData))
      decipher.setAuthTag(parts.tag)
      return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]).toString('utf8')
    } catch (err) {
      throw new TokenDecryptionError(parts.keyId, err)
    }
  }

  /** True when the envelope was sealed with a key other than the active one (re-encrypt it on next write). */
  needsReencryption(envelope: string): boolean {
    return parseEnvelope(envelope).keyId !== this.#keyring.active.id
  }

  /** Decrypts with whichever key sealed it and seals again with the active key. */
  reencrypt(envelope: string, associatedData: AssociatedData): string {
    return this.encrypt(this.decrypt(envelope, associatedData), associatedData)
  }

  /**
   * Decrypts with the current binding, or, while a change of binding is being migrated, with
   * the legacy one, and says which opened it. A legacy opening is weaker by definition (the
   * legacy binding covers less), so callers flag it and seal the token again with `current`.
   * When neither authenticates, the error is the current binding's.
   */
  decryptMigrating(envelope: string, current: AssociatedData, legacy: AssociatedData): MigratingDecryption {
    try {
      return { plaintext: this.decrypt(envelope, current), legacy: false }
    } catch (err) {
      if (!(err instanceof TokenDecryptionError || err instanceof TokenKeyUnknownError)) throw err
      try {
        return { plaintext: this.decrypt(envelope, legacy), legacy: true }
      } catch {
        throw err
      }
    }
  }
}

/** Splits and decodes an envelope without decrypting it. The message never contains the envelope itself. */
export function parseEnvelope(envelope: string): EnvelopeParts {
  const parts = envelope.split('.')
  if (parts[0] !== VERSION) {
    const version = parts.length > 1 ? parts[0]!.slice(0, 8) : '(none)'
    throw new TokenEnvelopeMalformedError(
      `unsupported token envelope version "${version}"; this build reads ${VERSION}`,
      {
        version,
      },
    )
  }
  if (parts.length !== 5) {
    throw new TokenEnvelopeMalformedError(
      `token envelope must have 5 dot-separated parts (v1.keyId.iv.ciphertext.tag), got ${parts.length}`,
    )
  }
  const [version, keyId, iv, ciphertext, tag] = parts as [string, string, string, string, string]
  for (const [name, value] of [
    ['iv', iv],
    ['ciphertext', ciphertext],
    ['tag', tag],
  ] as const) {
    if (!B64URL.test(value)) throw new TokenEnvelopeMalformedError(`token envelope ${name} is not base64url`)
  }
  const parsed = {
    version,
    keyId,
    iv: Buffer.from(iv, 'base64url'),
    ciphertext: Buffer.from(ciphertext, 'base64url'),
    tag: Buffer.from(tag, 'base64url'),
  }
  if (parsed.iv.length !== IV_BYTES) {
    throw new TokenEnvelopeMalformedError(
      `token envelope iv must be ${IV_BYTES} bytes, got ${parsed.iv.length}`,
    )
  }
  if (parsed.tag.length !== TAG_BYTES) {
    throw new TokenEnvelopeMalformedError(
      `token envelope tag must be ${TAG_BYTES} bytes, got ${parsed.tag.length}`,
    )
  }
  return parsed
}

function aad(keyId: string, associatedData: AssociatedData): Buffer {
  return Buffer.from(`${VERSION}.${keyId}.${encodeAssociatedData(associatedData)}`, 'utf8')
}

function encodeAssociatedData(associatedData: AssociatedData): string {
  if (typeof associatedData === 'string') return associatedData
  // The length prefixes keep lists apart; the NUL marker keeps a list apart from a plain
  // string (consent ids and the like never contain NUL).
  return '\u0000list' + associatedData.map((v) => `\u0000${Buffer.byteLength(v, 'utf8')}:${v}`).join('')
}

function b64(buf: Buffer): string {
  return buf.toString('base64url')
}

function tryDecrypt(
  key: Buffer,
  parts: ReturnType<typeof parseEnvelope>,
  associatedData: AssociatedData,
): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, parts.iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(aad(parts.keyId, associatedData))
    decipher.setAuthTag(parts.tag)
    return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}
