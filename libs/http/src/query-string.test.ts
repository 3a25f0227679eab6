import { describe, expect, it } from 'vitest'
import {
  buildQueryString,
  encodePathSegment,
  encodeQuery,
  encodeQueryComponent,
  redactUrl,
} from './query-string.ts'

describe('buildQueryString', () => {
  it('omits undefined and sends null and "" as present-but-empty', () => {
    expect(buildQueryString({ merchantId: 'M1', terminalId: undefined, mcc: null, city: '' })).toBe(
      'merchantId=M1&mcc=&city=',
    )
  })

  it('percent-encodes spaces as %20, diacritics as UTF-8 and reserved characters', () => {
    const qs = buildQueryString({
      description: 'Kavárna Ďáblice & spol.',
      city: 'Brno+1',
      q: "a/b?c=d#e!'()*",
    })
    expect(qs).toBe(
      'description=Kav%C3%A1rna%20%C4%8E%C3%A1blice%20%26%20spol.&city=Brno%2B1&q=a%2Fb%3Fc%3Dd%23e%21%27%28%29%2A',
    )
    // Round-trips through a standard parser.
    const parsed = new URLSearchParams(qs)
    expect(parsed.get('description')).toBe('Kavárna Ďáblice & spol.')
    expect(parsed.get('city')).toBe('Brno+1')
    expect(parsed.get('q')).toBe("a/b?c=d#e!'()*")
  })

  it('stringifies numbers and booleans and returns "" for nothing', () => {
    expect(buildQueryString({ pageSize: 100, refresh: false })).toBe('pageSize=100&refresh=false')
    expect(buildQueryString(undefined)).toBe('')
    expect(buildQueryString({ a: undefined })).toBe('')
  })
})

describe('buildQueryString with many distinct names', () => {
  it('encodes every name correctly past the size of its name table', () => {
    for (let i = 0; i < 2_500; i++) {
      expect(buildQueryString({ [`n ${i}!`]: 'v', fixed: null })).toBe(`n%20${i}%21=v&fixed=`)
    }
  })
})

describe('encodePathSegment', () => {
  it('keeps a segment a single segment', () => {
    expect(encodePathSegment('538Vq/x@gb y')).toBe('538Vq%2Fx%40gb%20y')
  })
})

describe('redactUrl', () => {
  it('keeps origin, path and parameter names, hides values', () => {
    const url = new URL(
      'https://api.example.com/v5/shops/findByCardTransaction?merchantId=12345&cardBin=411111&mcc=',
    )
    expect(redactUrl(url)).toBe(
      'https://api.example.com/v5/shops/findByCardTransaction?merchantId=*&cardBin=*&mcc=*',
    )
    expect(redactUrl(new URL('http://127.0.0.1:1/x'))).toBe('http://127.0.0.1:1/x')
  })
})

describe('encodeQuery', () => {
  it('gives the query and its redacted form of the same parameters, absent ones left out of both', () => {
    expect(
      encodeQuery({ merchantId: 'M-1.x_y~z', terminalId: undefined, description: 'A B', mcc: null, n: 5 }),
    ).toEqual({
      query: 'merchantId=M-1.x_y~z&description=A%20B&mcc=&n=5',
      redacted: '?merchantId=*&description=*&mcc=*&n=*',
    })
    expect(encodeQuery({ a: undefined })).toEqual({ query: '', redacted: '' })
    expect(encodeQuery(undefined)).toEqual({ query: '', redacted: '' })
  })

  it('encodes every ASCII character and some others as encodeURIComponent plus the sub-delimiters', () => {
    const chars = [...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)), 'é', 'Ď', '€', '😀']
    for (const c of chars) {
      const value = `a${c}b`
      const expected = encodeURIComponent(value).replace(
        /[!'()*]/g,
        (x) => `%${x.charCodeAt(0).toString(16).toUpperCase()}`,
      )
      expect(encodeQueryComponent(value)).toBe(expected)
      expect(encodeQuery({ v: value }).query).toBe(`v=${expected}`)
    }
  })
})
