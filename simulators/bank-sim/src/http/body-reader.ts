import type { CobsErrorItem } from '../errors.ts'

/**
 * Reads fields of an untrusted JSON body by dotted path and collects COBS errors
 * (FIELD_MISSING, FIELD_INVALID) with the path as `scope`, so one answer can
 * list every problem of a request.
 */
export class BodyReader {
  readonly errors: CobsErrorItem[] = []
  readonly #root: unknown

  constructor(root: unknown) {
    this.#root = root
  }

  raw(path: string): unknown {
    let cur: unknown = this.#root
    for (const part of path.split('.')) {
      if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined
      cur = (cur as Record<string, unknown>)[part]
    }
    return cur
  }

  has(path: string): boolean {
    return this.raw(path) !== undefined
  }

  string(path: string, options: { required?: boolean; max?: number; pattern?: RegExp; patternHint?: string } = {}): string | undefined {
    const v = this.raw(path)
    if (v === undefined || v === null) {
      if (options.required) this.errors.push({ error: 'FIELD_MISSING', scope: path, message: `${path} is required` })
      return undefined
    }
    if (typeof v !== 'string' || (options.required && v.trim() === '')) {
      this.errors.push({ error: 'FIELD_INVALID', scope: path, message: `${path} must be a non-empty string` })
      return undefined
    }
    if (options.max !== undefined && v.length > options.max) {
      this.errors.push({ error: 'FIELD_INVALID', scope: path, parameters: { MAX_LENGTH: String(options.max) }, message: `${path} is longer than ${options.max} characters` })
      return undefined
    }
    if (options.pattern && !options.pattern.test(v)) {
      this.errors.push({ error: 'FIELD_INVALID', scope: path, message: `${path} must be ${options.patternHint ?? `like ${options.pattern.source}`}, got ${JSON.stringify(v)}` })
      return undefined
    }
    return v
  }

  enumOf<T extends string>(path: string, values: readonly T[], options: { required?: boolean } = {}): T | undefined {
    const v = this.string(path, options)
    if (v === undefined) return undefined
    if (!(values as readonly string[]).includes(v)) {
      this.errors.push({ error: 'FIELD_INVALID', scope: path, parameters: { ALLOWED: values.join(',') }, message: `${path} must be one of ${values.join(', ')}, got ${JSON.stringify(v)}` })
      return undefined
    }
    return v as T
  }

  object(path: string, options: { required?: boolean } = {}): Record<string, unknown> | undefined {
    const v = this.raw(path)
    if (v === undefined || v === null) {
      if (options.required) this.errors.push({ error: 'FIELD_MISSING', scope: path, message: `${path} is required` })
      return undefined
    }
    if (typeof v !== 'object' || Array.isArray(v)) {
      this.errors.push({ error: 'FIELD_INVALID', scope: path, message: `${path} must be an object` })
      return undefined
    }
    return v as Record<string, unknown>
  }
}

/** SWIFT "X" character set of payment text fields; anything else is COBS error RR10. */
export const SWIFT_TEXT = /^[A-Za-z0-9/\-?:().,'+ ]*$/

/** Czech payment symbols: VS, SS and KS, up to 10 digits each. */
export const SYMBOL = /^(VS|SS|KS):[0-9]{1,10}$/
