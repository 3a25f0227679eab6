import { describe, expect, it } from 'vitest'
import {
  EnrichmentBadRequestError,
  EnrichmentForbiddenError,
  EnrichmentInputError,
  EnrichmentMethodNotAllowedError,
  EnrichmentNetworkError,
  EnrichmentNotImplementedError,
  EnrichmentRequestTooLargeError,
  EnrichmentServerError,
  EnrichmentThrottledError,
  EnrichmentTimeoutError,
  EnrichmentUnauthorizedError,
  EnrichmentUnsupportedMediaTypeError,
} from '@tep/enrichment-client'
import { RawRecordError, SystemicLookupError } from './errors.ts'
import { classifyLookupError } from './lookup-outcome.ts'
import { Lookups } from './lookups.ts'
import { FakeEnrichment } from './test-fakes.ts'

const op = { operation: 'enrichment.findByCardTransaction' }
const badRequest = (code: string, parameter?: string) =>
  new EnrichmentBadRequestError('bad input', {
    ...op,
    status: 400,
    apiError: { code, message: `${code} happened`, ...(parameter ? { parameter } : {}) },
  })

describe('classifyLookupError', () => {
  it('turns a 400 for the record into REJECTED with the API code, message and parameter', () => {
    expect(classifyLookupError(badRequest('INVALID_PARAMETER', 'mcc'))).toEqual({
      kind: 'rejected',
      reason: {
        code: 'INVALID_PARAMETER',
        message: 'INVALID_PARAMETER happened (parameter mcc)',
        httpStatus: 400,
      },
    })
  })

  it('turns a 501 into REJECTED with reason NOT_IMPLEMENTED', () => {
    const failure = classifyLookupError(
      new EnrichmentNotImplementedError('variant not offered', {
        ...op,
        status: 501,
        apiError: { code: 'NOT_IMPLEMENTED', message: 'no' },
      }),
    )
    expect(failure).toMatchObject({ kind: 'rejected', reason: { code: 'NOT_IMPLEMENTED', httpStatus: 501 } })
  })

  it('turns an input the client refuses to send into a local REJECTED', () => {
    const failure = classifyLookupError(new EnrichmentInputError('cardBin holds 16 characters', op))
    expect(failure).toMatchObject({
      kind: 'rejected',
      reason: { code: 'ENRICHMENT_INPUT_INVALID', httpStatus: null },
    })
  })

  it.each([
    [
      '401 after token refresh',
      new EnrichmentUnauthorizedError('unauthorized', { ...op, status: 401 }),
      'ENRICHMENT_UNAUTHORIZED',
    ],
    ['403', new EnrichmentForbiddenError('forbidden', { ...op, status: 403 }), 'ENRICHMENT_FORBIDDEN'],
    [
      '405 (our bug)',
      new EnrichmentMethodNotAllowedError('method', { ...op, status: 405 }),
      'ENRICHMENT_METHOD_NOT_ALLOWED',
    ],
    [
      '415 (our bug)',
      new EnrichmentUnsupportedMediaTypeError('media', { ...op, status: 415 }),
      'ENRICHMENT_UNSUPPORTED_MEDIA_TYPE',
    ],
    ['5xx', new EnrichmentServerError('boom', { ...op, status: 503 }), 'ENRICHMENT_SERVER_ERROR'],
    [
      '429',
      new EnrichmentThrottledError('slow down', { ...op, status: 429, retryAfterMs: 2000 }),
      'ENRICHMENT_THROTTLED',
    ],
    ['timeout', new EnrichmentTimeoutError('too slow', op), 'ENRICHMENT_TIMEOUT'],
    ['network', new EnrichmentNetworkError('reset', { ...op, retriable: true }), 'ENRICHMENT_NETWORK_ERROR'],
    [
      'a whole-request 400 that is not about the record',
      new EnrichmentBadRequestError('no accept header', { ...op, status: 400, recordScoped: false }),
      'ENRICHMENT_BAD_REQUEST',
    ],
    ['an unexpected bug', new TypeError('x is undefined'), 'ENRICHMENT_SYSTEMIC_FAILURE'],
  ])('treats %s as systemic and retriable (never a DLQ reason)', (_name, err, code) => {
    const failure = classifyLookupError(err)
    expect(failure.kind).toBe('systemic')
    if (failure.kind !== 'systemic') return
    expect(failure.error).toBeInstanceOf(SystemicLookupError)
    expect(failure.error.retriable).toBe(true)
    expect(failure.error.code).toBe(code)
    expect(failure.error.cause).toBe(err)
  })

  it('keeps Retry-After so the pipeline backs off at least that long', () => {
    const failure = classifyLookupError(
      new EnrichmentThrottledError('slow down', { ...op, status: 429, retryAfterMs: 3000 }),
    )
    expect(failure.kind === 'systemic' && failure.error.details.retryAfterMs).toBe(3000)
  })
})

describe('Lookups', () => {
  it('single mode: one GET per record, never cached', async () => {
    const api = new FakeEnrichment()
    api.single = async (input) => ({
      status: 'found',
      handle: `h-${input.merchantId}`,
      shopUid: `s-${input.merchantId}`,
    })
    const lookups = new Lookups({ client: api, mode: 'single', batchMax: 500, lingerMs: 5 })
    const results = await Promise.all(['1', '1', '2'].map((m) => lookups.card({ merchantId: m })))
    expect(api.count('single')).toBe(3)
    expect(results.map((r) => r.kind === 'found' && r.shopUid)).toEqual(['s-1', 's-1', 's-2'])
    expect(results[0]).toMatchObject({ handle: 'h-1', operation: 'findByCardTransaction', attempts: 1 })
  })

  it('batch mode: groups concurrent records into one call and maps results, invalid entries and not-found by position', async () => {
    const api = new FakeEnrichment()
    api.batch = async (inputs) =>
      inputs.map((input) =>
        input.merchantId === 'bad'
          ? {
              status: 'invalid',
              error: { code: 'INVALID_PARAMETER', message: 'mcc must be 4 digits', parameter: 'mcc' },
            }
          : input.merchantId === 'none'
            ? { status: 'notFound', handle: 'h-none' }
            : { status: 'found', handle: `h-${input.merchantId}`, shopUid: `s-${input.merchantId}` },
      )
    const lookups = new Lookups({ client: api, mode: 'batch', batchMax: 500, lingerMs: 1 })
    const results = await Promise.all(['a', 'bad', 'none', 'b'].map((m) => lookups.card({ merchantId: m })))
    expect(api.count('batch')).toBe(1)
    expect(results).toEqual([
      { kind: 'found', handle: 'h-a', shopUid: 's-a', operation: 'findByCardTransactionBatch', attempts: 1 },
      {
        kind: 'rejected',
        reason: {
          code: 'INVALID_PARAMETER',
          message: 'mcc must be 4 digits (parameter mcc)',
          httpStatus: 400,
        },
        operation: 'findByCardTransactionBatch',
        attempts: 1,
      },
      { kind: 'notFound', handle: 'h-none', operation: 'findByCardTransactionBatch', attempts: 1 },
      { kind: 'found', handle: 'h-b', shopUid: 's-b', operation: 'findByCardTransactionBatch', attempts: 1 },
    ])
  })

  it('batch mode: a whole-batch 400 falls back to single calls that isolate the bad record', async () => {
    const api = new FakeEnrichment()
    api.batch = async () => {
      throw badRequest('INVALID_BODY')
    }
    api.single = async (input) => {
      if (input.merchantId === 'bad') throw badRequest('INVALID_PARAMETER', 'merchantId')
      return { status: 'found', handle: 'h', shopUid: `s-${input.merchantId}` }
    }
    const lookups = new Lookups({ client: api, mode: 'batch', batchMax: 3, lingerMs: 1 })
    const results = await Promise.all(['a', 'bad', 'c'].map((m) => lookups.card({ merchantId: m })))
    expect(api.count('batch')).toBe(1)
    expect(api.count('single')).toBe(3)
    expect(results.map((r) => r.kind)).toEqual(['found', 'rejected', 'found'])
    expect(results[1]).toMatchObject({
      reason: { code: 'INVALID_PARAMETER' },
      attempts: 2,
      operation: 'findByCardTransaction',
    })
  })

  it('batch mode: a 413 for the whole batch falls back to single calls; a record too large alone is a record error', async () => {
    const api = new FakeEnrichment()
    const tooLarge = (status: number) =>
      new EnrichmentRequestTooLargeError('too large', { ...op, status })
    api.batch = async () => {
      throw tooLarge(413)
    }
    api.single = async (input) => {
      if (input.merchantId === 'huge') throw tooLarge(431)
      return { status: 'found', handle: 'h', shopUid: `s-${input.merchantId}` }
    }
    const lookups = new Lookups({ client: api, mode: 'batch', batchMax: 3, lingerMs: 1 })
    const settled = await Promise.allSettled(['a', 'huge', 'c'].map((m) => lookups.card({ merchantId: m })))
    expect(api.count('batch')).toBe(1)
    expect(api.count('single')).toBe(3)
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    const reason = (settled[1] as PromiseRejectedResult).reason
    expect(reason).toBeInstanceOf(RawRecordError)
    expect(reason).toMatchObject({ code: 'RAW_REQUEST_TOO_LARGE', retriable: false })
    expect(reason.message).toContain('HTTP 431')
  })

  it.each([413, 414, 431])('single mode: a %i is a record error, never systemic', async (status) => {
    const api = new FakeEnrichment()
    api.single = async () => {
      throw new EnrichmentRequestTooLargeError('too large', { ...op, status })
    }
    const lookups = new Lookups({ client: api, mode: 'single', batchMax: 1, lingerMs: 1 })
    await expect(lookups.card({ merchantId: 'x' })).rejects.toMatchObject({
      code: 'RAW_REQUEST_TOO_LARGE',
      retriable: false,
    })
  })

  it.each([413, 414, 431])('a %i that even a minimal request gets (recordScoped false) is systemic: no record goes to the DLQ', async (status) => {
    const api = new FakeEnrichment()
    const proxyLimit = () => new EnrichmentRequestTooLargeError('limit refuses even this small request', { ...op, status, recordScoped: false })
    api.single = async () => {
      throw proxyLimit()
    }
    api.batch = async () => {
      throw proxyLimit()
    }
    const single = new Lookups({ client: api, mode: 'single', batchMax: 1, lingerMs: 1 })
    await expect(single.card({ merchantId: 'x' })).rejects.toBeInstanceOf(SystemicLookupError)
    // In batch mode it does not fall back to single calls either: they would all be refused alike.
    const batch = new Lookups({ client: api, mode: 'batch', batchMax: 2, lingerMs: 1 })
    const settled = await Promise.allSettled([batch.card({ merchantId: 'a' }), batch.card({ merchantId: 'b' })])
    for (const s of settled) expect((s as PromiseRejectedResult).reason).toBeInstanceOf(SystemicLookupError)
    expect(api.count('single')).toBe(1)
  })

  it('batch mode: a systemic batch failure fails every record of the batch with a retriable error', async () => {
    const api = new FakeEnrichment()
    api.batch = async () => {
      throw new EnrichmentServerError('down', {
        operation: 'enrichment.findByCardTransactionBatch',
        status: 503,
      })
    }
    const lookups = new Lookups({ client: api, mode: 'batch', batchMax: 2, lingerMs: 1 })
    const settled = await Promise.allSettled([
      lookups.card({ merchantId: 'a' }),
      lookups.card({ merchantId: 'b' }),
    ])
    for (const s of settled) {
      expect(s.status).toBe('rejected')
      const reason = (s as PromiseRejectedResult).reason
      expect(reason).toBeInstanceOf(SystemicLookupError)
      expect(reason.code).toBe('ENRICHMENT_SERVER_ERROR')
    }
    expect(api.count('single')).toBe(0)
  })

  it('transfers: one call per record to the scheme variant; a 501 is REJECTED NOT_IMPLEMENTED; unknown schemes are rejected without a call', async () => {
    const api = new FakeEnrichment()
    api.transfer = async (scheme) => {
      if (scheme === 'uk')
        throw new EnrichmentNotImplementedError('not offered', { operation: 'x', status: 501 })
      return { status: 'found', handle: 'h', shopUid: 's' }
    }
    const lookups = new Lookups({ client: api, mode: 'batch', batchMax: 500, lingerMs: 1 })
    await expect(
      lookups.transfer({ kind: 'supported', scheme: 'certis', input: { accountNumber: '1' } }),
    ).resolves.toMatchObject({ kind: 'found', operation: 'findByBankTransfer/certis' })
    await expect(lookups.transfer({ kind: 'supported', scheme: 'uk', input: {} })).resolves.toMatchObject({
      kind: 'rejected',
      reason: { code: 'NOT_IMPLEMENTED', httpStatus: 501 },
    })
    expect(api.calls.map((c) => c.op)).toEqual(['transfer/certis', 'transfer/uk'])
  })

  it('uses the complete variants while the table is cold (auto), and the plain ones once it is warm', async () => {
    const api = new FakeEnrichment()
    api.completeBatch = async (inputs) =>
      inputs.map((i) => ({
        status: 'found',
        handle: 'h',
        shopUid: `s-${i.merchantId}`,
        shop: { uid: `s-${i.merchantId}`, merchantUid: 'm' },
        merchant: { uid: 'm' },
      }))
    api.batch = async (inputs) =>
      inputs.map((i) => ({ status: 'found', handle: 'h', shopUid: `s-${i.merchantId}` }))
    api.completeSingle = async (i) => ({
      status: 'found',
      handle: 'h',
      shopUid: `s-${i.merchantId}`,
      shop: { uid: `s-${i.merchantId}` },
      merchant: undefined,
    })
    let cold = true
    const batch = new Lookups({
      client: api,
      mode: 'batch',
      batchMax: 500,
      lingerMs: 1,
      complete: 'auto',
      tableIsCold: () => cold,
    })
    const first = await batch.card({ merchantId: '1' })
    expect(first).toMatchObject({
      kind: 'found',
      operation: 'completeFindByCardTransactionBatch',
      shop: { uid: 's-1' },
      merchant: { uid: 'm' },
    })
    cold = false
    const second = await batch.card({ merchantId: '2' })
    expect(second).toMatchObject({ kind: 'found', operation: 'findByCardTransactionBatch' })
    expect(second).not.toHaveProperty('shop')
    expect(api.calls.map((c) => c.op)).toEqual(['completeBatch', 'batch'])

    const single = new Lookups({
      client: api,
      mode: 'single',
      batchMax: 500,
      lingerMs: 1,
      complete: 'always',
      tableIsCold: () => false,
    })
    await expect(single.card({ merchantId: '3' })).resolves.toMatchObject({
      operation: 'completeFindByCardTransaction',
      shop: { uid: 's-3' },
    })
    const never = new Lookups({
      client: api,
      mode: 'single',
      batchMax: 500,
      lingerMs: 1,
      complete: 'never',
      tableIsCold: () => true,
    })
    await expect(never.card({ merchantId: '4' })).resolves.toMatchObject({
      operation: 'findByCardTransaction',
    })
  })

  it('refuses a batch size above the API limit', () => {
    expect(
      () => new Lookups({ client: new FakeEnrichment(), mode: 'batch', batchMax: 501, lingerMs: 1 }),
    ).toThrow(/1\.\.500/)
  })
})
