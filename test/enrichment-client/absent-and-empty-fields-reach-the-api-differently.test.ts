import type { EnrichmentClient } from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  cardInput,
  newClient,
  oneSample,
  samples,
  startRecordingProxy,
  startSim,
  type RecordedRequest,
  type SampleFound,
  type SimSample,
} from './sim-harness.ts'

/**
 * The spec's rules 3 to 5, observed on the simulator's side: a field the source
 * does not have is omitted, a field it has with an empty value is sent empty,
 * and the URL is percent-encoded. A recording pass-through in front of the
 * simulator captures each request as it came off the wire; the simulator's
 * answers show it read them as intended.
 */

let sim: EnrichmentSim
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>
let client: EnrichmentClient
let found: SimSample

beforeAll(async () => {
  sim = await startSim()
  proxy = await startRecordingProxy(sim.url)
  client = newClient(sim, { baseUrl: proxy.url, tokenUrl: sim.tokenUrl })
  found = await oneSample(sim, { count: 1, kind: 'card', outcome: 'found', seed: 21 })
})

beforeEach(() => {
  proxy.requests.length = 0
})

afterAll(async () => {
  await client?.close()
  await proxy?.close()
  await sim?.close()
})

function lastRequest(path: string): RecordedRequest {
  const request = proxy.requests.filter((r) => r.url.startsWith(path)).at(-1)
  if (request === undefined)
    throw new Error(`no request to ${path} went out; saw ${JSON.stringify(proxy.requests.map((r) => r.url))}`)
  return request
}

function lastLookupQuery(path: string): string {
  const url = lastRequest(path).url
  return url.slice(url.indexOf('?') + 1)
}

describe('absent vs empty on the wire', () => {
  it('omits undefined fields and sends null and "" as empty parameters', async () => {
    const input = {
      ...cardInput(found),
      mcc: null,
      postalCode: '',
      acquirerId: undefined,
      currency: undefined,
    }
    const result = await client.findByCardTransaction(input)
    expect(result).toMatchObject({ status: 'found', shopUid: (found.expected as SampleFound).shopUid })

    const query = lastLookupQuery('/v5/shops/findByCardTransaction?')
    const names = query.split('&').map((p) => p.split('=')[0])
    expect(query.split('&')).toContain('mcc=')
    expect(query.split('&')).toContain('postalCode=')
    expect(names).not.toContain('acquirerId')
    expect(names).not.toContain('currency')
    // The literal strings "null" or "undefined" never reach the API.
    expect(query).not.toMatch(/=(null|undefined)(&|$)/)
  })

  it('percent-encodes spaces as %20 and diacritics as UTF-8', async () => {
    const result = await client.findByCardTransaction({
      description: 'Kavárna U Zlatého Tygra',
      city: 'Praha 1',
      merchantId: undefined,
    })
    expect(result.status).toBe('notFound')
    const query = lastLookupQuery('/v5/shops/findByCardTransaction?')
    expect(query).toBe('description=Kav%C3%A1rna%20U%20Zlat%C3%A9ho%20Tygra&city=Praha%201')
  })

  it('forwards the same distinction for bank transfers', async () => {
    const [transfer] = await samples(sim, { count: 1, kind: 'transfer', outcome: 'found', seed: 22 })
    const scheme = transfer!.operation.split('/')[1] as 'certis' | 'sepa' | 'uk'
    const result = await client.findByBankTransfer(scheme, {
      ...transfer!.input,
      name: null,
      amount: undefined,
      currency: '',
    })
    expect(result).toMatchObject({ status: 'found', shopUid: (transfer!.expected as SampleFound).shopUid })
    const parts = lastLookupQuery(`/v5/shops/findByBankTransfer/${scheme}?`).split('&')
    expect(parts).toContain('name=')
    expect(parts).toContain('currency=')
    expect(parts.map((p) => p.split('=')[0])).not.toContain('amount')
  })

  it('a batch entry with empty values is valid, one with a malformed value is not', async () => {
    const results = await client.findByCardTransactionBatch([
      { ...cardInput(found), mcc: null, cardBin: '', country: undefined },
      { ...cardInput(found), mcc: 'null' },
    ])
    expect(results[0]).toMatchObject({ status: 'found', shopUid: (found.expected as SampleFound).shopUid })
    expect(results[1]).toMatchObject({ status: 'invalid', error: { parameter: 'mcc' } })
    const sent = JSON.parse(lastRequest('/v5/shops/findByCardTransactionBatch').body) as {
      requests: Array<Record<string, unknown>>
    }
    expect(sent.requests[0]).toMatchObject({ mcc: '', cardBin: '' })
    expect('country' in sent.requests[0]!).toBe(false)
  })

  it('sends Accept: application/json and never asks for or sends compression', async () => {
    await client.findByCardTransactionBatch([cardInput(found)])
    await client.findByCardTransaction(cardInput(found))
    for (const request of proxy.requests) {
      expect(request.headers.accept).toBe('application/json')
      expect(request.headers['accept-encoding']).toBeUndefined()
      expect(request.headers['content-encoding']).toBeUndefined()
    }
  })
})
