import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { TokenDecryptionError, TokenEnvelopeMalformedError, TokenKeyUnknownError } from './errors.ts'
import { createKeyring, parseKeyring } from './keyring.ts'
import { TokenCipher, parseEnvelope } from './token-cipher.ts'

const keyA = randomBytes(32)
const keyB = randomBytes(32)
const cipherA = new TokenCipher(createKeyring([{ id: 'a', key: keyA }]))

/** Flips one bit in the base64url part `index` of an envelope. */
function flip(envelope: string, index: number): string {
  const parts = envelope.split('.')
  const bytes = Buffer.from(parts[index]!, 'base64url')
  bytes[0] = bytes[0]! ^ 0x01
  parts[index] = bytes.toString('base64url')
  return parts.join('.')
}

describe('TokenCipher', () => {
  it('round-trips a token and writes a v1 envelope with the key id', () => {
    const env = cipherA.encrypt('refresh-token-ÄÖ-123', 'consent-1')
    expect(env.split('.')).toHaveLength(5)
    expect(env.startsWith('v1.a.')).toBe(true)
    expect(env).not.toContain('refresh-token')
    expect(cipherA.decrypt(env, 'consent-1')).toBe('refresh-token-ÄÖ-123')
  })

  it('uses a fresh iv per encryption so equal tokens give different envelopes', () => {
    const a = cipherA.encrypt('same', 'c')
    const b = cipherA.encrypt('same', 'c')
    expect(a).not.toBe(b)
    expect(parseEnvelope(a).iv.equals(parseEnvelope(b).iv)).toBe(false)
  })

  it('refuses an envelope moved to another consent (associated data binding)', () => {
    const env = cipherA.encrypt('tok', 'consent-1')
    expect(() => cipherA.decrypt(env, 'consent-2')).toThrow(TokenDecryptionError)
  })

  it.each([
    ['iv', 2],
    ['ciphertext', 3],
    ['tag', 4],
  ])('detects a flipped bit in the %s', (_name, index) => {
    const env = cipherA.encrypt('tok-value', 'consent-1')
    try {
      cipherA.decrypt(flip(env, index), 'consent-1')
      expect.unreachable('tampered envelope decrypted')
    } catch (err) {
      expect(err).toBeInstanceOf(TokenDecryptionError)
      expect((err as TokenDecryptionError).code).toBe('TOKEN_DECRYPTION_FAILED')
    }
  })

  it('detects a key id swapped to another key in the ring', () => {
    const ring = new TokenCipher(
      createKeyring([
        { id: 'a', key: keyA },
        { id: 'b', key: keyA },
      ]),
    )
    const env = ring.encrypt('tok', 'c1')
    // Same key bytes under another id: only the AAD binding can catch the swap.
    const swapped = env.replace(/^v1\.a\./, 'v1.b.')
    expect(() => ring.decrypt(swapped, 'c1')).toThrow(TokenDecryptionError)
  })

  it('names an unknown key id instead of reporting tampering', () => {
    const env = new TokenCipher(createKeyring([{ id: 'b', key: keyB }])).encrypt('tok', 'c1')
    expect(() => cipherA.decrypt(env, 'c1')).toThrow(TokenKeyUnknownError)
  })

  it('rejects malformed envelopes and other versions with a typed error', () => {
    expect(() => cipherA.decrypt('not-an-envelope', 'c')).toThrow(TokenEnvelopeMalformedError)
    expect(() => cipherA.decrypt('v2.a.x.y.z', 'c')).toThrow(/unsupported token envelope version "v2"/)
    expect(() => cipherA.decrypt('v1.a.AAAA.BBBB', 'c')).toThrow(/5 dot-separated parts/)
    expect(() => cipherA.decrypt('v1.a.AAAA.BBBB.CCCC', 'c')).toThrow(/iv must be 12 bytes/)
    expect(() => cipherA.decrypt('v1.a.A+A=.BBBB.CCCC', 'c')).toThrow(/not base64url/)
  })

  it('rotates: an old-key envelope still decrypts, is flagged, and re-encrypts under the new key', () => {
    const old = cipherA.encrypt('tok', 'c1')
    const rotated = new TokenCipher(
      createKeyring([
        { id: 'b', key: keyB },
        { id: 'a', key: keyA },
      ]),
    )
    expect(rotated.activeKeyId).toBe('b')
    expect(rotated.decrypt(old, 'c1')).toBe('tok')
    expect(rotated.needsReencryption(old)).toBe(true)
    const fresh = rotated.reencrypt(old, 'c1')
    expect(parseEnvelope(fresh).keyId).toBe('b')
    expect(rotated.needsReencryption(fresh)).toBe(false)
    // once the old key is retired, only re-encrypted envelopes remain readable
    const retired = new TokenCipher(createKeyring([{ id: 'b', key: keyB }]))
    expect(retired.decrypt(fresh, 'c1')).toBe('tok')
    expect(() => retired.decrypt(old, 'c1')).toThrow(TokenKeyUnknownError)
  })

  it('fails authentication when a key id maps to different key bytes', () => {
    const env = cipherA.encrypt('tok', 'c1')
    const wrong = new TokenCipher(createKeyring([{ id: 'a', key: keyB }]))
    expect(() => wrong.decrypt(env, 'c1')).toThrow(TokenDecryptionError)
  })
})

describe('parseKeyring', () => {
  it('accepts a bare base64 key and derives a stable id from it', () => {
    const b64 = keyA.toString('base64')
    const r1 = parseKeyring(b64)
    const r2 = parseKeyring(` ${b64} `)
    expect(r1.active.id).toMatch(/^k[0-9a-f]{16}$/)
    expect(r1.active.id).toBe(r2.active.id)
    expect(parseKeyring(keyB.toString('base64')).active.id).not.toBe(r1.active.id)
  })

  it('accepts id:key lists with the first entry active', () => {
    const ring = parseKeyring(`new:${keyB.toString('base64')}, old:${keyA.toString('base64url')}`)
    expect(ring.active.id).toBe('new')
    expect([...ring.keys.keys()]).toEqual(['new', 'old'])
    expect(ring.keys.get('old')!.key.equals(keyA)).toBe(true)
  })

  it('refuses wrong lengths, bad ids, duplicates and empty values without echoing the secret', () => {
    const short = randomBytes(16).toString('base64')
    expect(() => parseKeyring(short)).toThrow(/must decode to 32 bytes .* got 16 bytes/)
    try {
      parseKeyring(short)
    } catch (err) {
      expect(String((err as Error).message)).not.toContain(short)
      expect((err as { code: string }).code).toBe('TOKEN_KEY_CONFIG_INVALID')
    }
    expect(() => parseKeyring(`a.b:${keyA.toString('base64')}`)).toThrow(/key id must match/)
    expect(() => parseKeyring(`x:${keyA.toString('base64')},x:${keyB.toString('base64')}`)).toThrow(
      /appears twice/,
    )
    expect(() => parseKeyring(' , ')).toThrow(/is empty/)
    expect(() => parseKeyring('not base64 at all!')).toThrow(/outside base64/)
  })

  it('refuses an active key id that is not in the ring', () => {
    expect(() => createKeyring([{ id: 'a', key: keyA }], 'zzz')).toThrow(/active key id "zzz"/)
  })
})

describe('rotation with the documented variable forms', () => {
  it('decrypts envelopes of an old key listed without its id, and re-encrypts them with the new one', async () => {
    const { randomBytes } = await import('node:crypto')
    const oldKey = randomBytes(32)
    const newKey = randomBytes(32)
    // Before: TOKEN_ENCRYPTION_KEY=<old> with TOKEN_ENCRYPTION_KEY_ID=k1 (the default).
    const before = new TokenCipher(createKeyring([{ id: 'k1', key: oldKey }]))
    const sealed = before.encrypt('refresh-token-1', 'consent-1')
    // After: TOKEN_ENCRYPTION_KEY=k2:<new>,<old> (the old one listed bare).
    const after = new TokenCipher(parseKeyring(`k2:${newKey.toString('base64')},${oldKey.toString('base64')}`))
    expect(after.decrypt(sealed, 'consent-1')).toBe('refresh-token-1')
    expect(after.needsReencryption(sealed)).toBe(true)
    const resealed = after.reencrypt(sealed, 'consent-1')
    expect(parseEnvelope(resealed).keyId).toBe('k2')
    expect(after.needsReencryption(resealed)).toBe(false)
    // A key that sealed nothing here still cannot open it.
    const stranger = new TokenCipher(createKeyring([{ id: 'k3', key: randomBytes(32) }]))
    expect(() => stranger.decrypt(sealed, 'consent-1')).toThrow(/k1/)
    // Bound to its consent even when found by trial.
    expect(() => after.decrypt(sealed, 'consent-2')).toThrow()
  })
})

describe('TokenCipher bound to several values (consent and customer)', () => {
  it('refuses an envelope whose second bound value changed (the customer of a consent)', () => {
    const env = cipherA.encrypt('tok', ['consent-1', 'victim'])
    expect(cipherA.decrypt(env, ['consent-1', 'victim'])).toBe('tok')
    expect(() => cipherA.decrypt(env, ['consent-1', 'attacker'])).toThrow(TokenDecryptionError)
    // Nor does it open with the consent id alone: a list never encodes like a string.
    expect(() => cipherA.decrypt(env, 'consent-1')).toThrow(TokenDecryptionError)
  })

  it('keeps lists whose joined text is equal apart', () => {
    const env = cipherA.encrypt('tok', ['a.b', 'c'])
    expect(() => cipherA.decrypt(env, ['a', 'b.c'])).toThrow(TokenDecryptionError)
  })

  it('opens a legacy envelope (consent id only) through decryptMigrating and flags it', () => {
    const legacy = cipherA.encrypt('tok', 'consent-1')
    expect(cipherA.decryptMigrating(legacy, ['consent-1', 'victim'], 'consent-1')).toEqual({
      plaintext: 'tok',
      legacy: true,
    })
    const current = cipherA.encrypt('tok', ['consent-1', 'victim'])
    expect(cipherA.decryptMigrating(current, ['consent-1', 'victim'], 'consent-1')).toEqual({
      plaintext: 'tok',
      legacy: false,
    })
    expect(() => cipherA.decryptMigrating(current, ['consent-1', 'attacker'], 'consent-1')).toThrow(
      TokenDecryptionError,
    )
  })
})
