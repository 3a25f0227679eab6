import { createHash } from 'node:crypto'
import { TokenKeyConfigError } from './errors.ts'

/** Key ids travel inside the dot-separated envelope, so they must not contain dots. */
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/
const KEY_BYTES = 32

export interface TokenKey {
  readonly id: string
  /** 32 raw bytes (AES-256). */
  readonly key: Buffer
}

export interface Keyring {
  /** The key new envelopes are encrypted with. */
  readonly active: TokenKey
  /** Every key that may still decrypt, the active one included. */
  readonly keys: ReadonlyMap<string, TokenKey>
}

/** Decodes a base64 (or base64url) key and checks that it is exactly 32 bytes. */
export function decodeKey(base64: string, label = 'key'): Buffer {
  const text = base64.trim()
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    throw new TokenKeyConfigError(
      `${label} must be base64 of 32 random bytes (e.g. \`openssl rand -base64 32\`); it contains characters outside base64`,
    )
  }
  const key = Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
  if (key.length !== KEY_BYTES) {
    throw new TokenKeyConfigError(
      `${label} must decode to ${KEY_BYTES} bytes for AES-256-GCM, got ${key.length} bytes`,
      {
        bytes: key.length,
      },
    )
  }
  return key
}

/**
 * A stable, non-secret id for a key that has none in configuration: the first 8 bytes of
 * SHA-256 over the key. Lets a single `TOKEN_ENCRYPTION_KEY` rotate without naming ids.
 */
export function fingerprintKeyId(key: Buffer): string {
  return 'k' + createHash('sha256').update('tep-token-key-id\0').update(key).digest('hex').slice(0, 16)
}

export function assertKeyId(id: string): void {
  if (!KEY_ID_PATTERN.test(id)) {
    throw new TokenKeyConfigError(
      `key id must match ${KEY_ID_PATTERN.source} (letters, digits, "_" or "-", no dots), got "${id}"`,
    )
  }
}

/** Builds a keyring from explicit keys; the first is active unless `activeKeyId` says otherwise. */
export function createKeyring(keys: readonly TokenKey[], activeKeyId?: string): Keyring {
  if (keys.length === 0) throw new TokenKeyConfigError('keyring needs at least one key')
  const map = new Map<string, TokenKey>()
  for (const k of keys) {
    assertKeyId(k.id)
    if (k.key.length !== KEY_BYTES) {
      throw new TokenKeyConfigError(`key "${k.id}" must be ${KEY_BYTES} bytes, got ${k.key.length}`, {
        keyId: k.id,
      })
    }
    if (map.has(k.id))
      throw new TokenKeyConfigError(`key id "${k.id}" appears twice in the keyring`, { keyId: k.id })
    map.set(k.id, { id: k.id, key: Buffer.from(k.key) })
  }
  const activeId = activeKeyId ?? keys[0]!.id
  const active = map.get(activeId)
  if (!active)
    throw new TokenKeyConfigError(`active key id "${activeId}" is not in the keyring`, { keyId: activeId })
  return { active, keys: map }
}

/**
 * Parses a keyring from one configuration string:
 * - `BASE64` (one key; its id is derived from its fingerprint), or
 * - `id1:BASE64,id2:BASE64,...` (the first entry is the active key; the rest only decrypt).
 * Entries may mix both forms. The value is secret: errors never echo it.
 */
export function parseKeyring(config: string, label = 'TOKEN_ENCRYPTION_KEY'): Keyring {
  const entries = config
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
  if (entries.length === 0)
    throw new TokenKeyConfigError(`${label} is empty; set it to base64 of 32 random bytes`)
  const keys = entries.map((entry, i) => {
    const colon = entry.indexOf(':')
    if (colon === -1) {
      const key = decodeKey(entry, `${label} entry ${i + 1}`)
      return { id: fingerprintKeyId(key), key }
    }
    const id = entry.slice(0, colon)
    assertKeyId(id)
    return { id, key: decodeKey(entry.slice(colon + 1), `${label} key "${id}"`) }
  })
  return createKeyring(keys)
}
