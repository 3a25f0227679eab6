import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { request } from 'undici'
import { parse } from 'yaml'
import type { EnrichmentSim } from '@tep/enrichment-sim'

/**
 * Helpers of the enrichment simulator's own tests: raw HTTP (undici, so no header
 * is added behind the test's back: fetch would add `Accept: *\/*`), the admin API,
 * and the OpenAPI document compiled for response validation.
 */

export interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: unknown
}

export interface RawRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
  path: string
  query?: Record<string, string>
  headers?: Record<string, string>
  body?: string
}

export async function call(sim: EnrichmentSim, req: RawRequest): Promise<RawResponse> {
  const qs = req.query === undefined ? '' : `?${new URLSearchParams(req.query).toString()}`
  const res = await request(`${sim.url}${req.path}${qs}`, { method: req.method ?? 'GET', headers: req.headers ?? {}, ...(req.body === undefined ? {} : { body: req.body }) })
  const text = await res.body.text()
  let body: unknown = text
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    // Left as text: the assertion on the body will show it.
  }
  return { status: res.statusCode, headers: res.headers, body }
}

export async function admin<T = Record<string, unknown>>(sim: EnrichmentSim, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const res = await call(sim, { method, path, headers: body === undefined ? {} : { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  if (res.status >= 300) throw new Error(`admin ${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body as T
}

export async function token(sim: EnrichmentSim, clientId = 'sim-client', clientSecret = 'sim-secret'): Promise<string> {
  const res = await call(sim, {
    method: 'POST',
    path: '/auth/protocol/openid-connect/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
  })
  if (res.status !== 200) throw new Error(`token request for ${clientId} answered ${res.status}: ${JSON.stringify(res.body)}`)
  return (res.body as { access_token: string }).access_token
}

export function bearer(accessToken: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${accessToken}`, accept: 'application/json', ...extra }
}

export interface Sample {
  kind: 'card' | 'transfer'
  operation: string
  path: string
  input: Record<string, string>
  expected: { outcome: 'found' | 'notFound' | 'invalid'; handle?: string; shopUid?: string; merchantUid?: string; rule?: string; code?: string; parameter?: string }
}

export async function samples(sim: EnrichmentSim, query: Record<string, string | number>): Promise<Sample[]> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))
  return (await admin<{ samples: Sample[] }>(sim, 'GET', `/__admin/samples?${qs}`)).samples
}

export const OPENAPI_PATH = fileURLToPath(new URL('../../schemas/openapi/enrichment-v5.yaml', import.meta.url))

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OpenApiDoc = any

export function loadOpenApi(): { doc: OpenApiDoc; ajv: Ajv2020 } {
  const doc = parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDoc
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ;(addFormatsModule as unknown as (a: Ajv2020) => void)(ajv)
  ajv.addSchema(doc, 'openapi')
  return { doc, ajv }
}
