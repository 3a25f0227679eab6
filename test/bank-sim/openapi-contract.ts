import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { ValidateFunction } from 'ajv'

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void

export const BANK_OPENAPI_PATH = fileURLToPath(new URL('../../schemas/openapi/bank-open-banking.yaml', import.meta.url))
export const BANK_SIM_ADMIN_OPENAPI_PATH = fileURLToPath(new URL('../../schemas/openapi/bank-sim-admin.yaml', import.meta.url))

type Json = Record<string, unknown>

function escapePointer(part: string): string {
  return part.replaceAll('~', '~0').replaceAll('/', '~1')
}

/**
 * Checks HTTP answers against the bank's OpenAPI document: the status must be
 * documented for the operation and a JSON body must match its schema (ajv,
 * JSON Schema 2020-12 as OpenAPI 3.1 uses).
 */
export class OpenApiContract {
  readonly doc: Json
  readonly #ajv: Ajv2020
  readonly #cache = new Map<string, ValidateFunction>()
  /** Every (method path status) that was checked, to assert coverage. */
  readonly seen = new Set<string>()

  constructor(path = BANK_OPENAPI_PATH) {
    this.doc = parse(readFileSync(path, 'utf8')) as Json
    this.#ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats(this.#ajv)
    this.#ajv.addSchema(this.doc, 'bank')
  }

  #response(method: string, template: string, status: number): { pointer: string; node: Json } {
    const paths = this.doc.paths as Record<string, Json>
    const op = paths[template]?.[method.toLowerCase()] as Json | undefined
    if (!op) throw new Error(`the OpenAPI document has no operation ${method} ${template}`)
    const responses = op.responses as Record<string, Json>
    const node = responses[String(status)]
    if (!node) throw new Error(`${method} ${template} answered ${status}, which the OpenAPI document does not list (listed: ${Object.keys(responses).join(', ')})`)
    const ref = node.$ref
    if (typeof ref === 'string') {
      const name = ref.replace('#/components/responses/', '')
      return { pointer: `/components/responses/${escapePointer(name)}`, node: (this.doc.components as Json as { responses: Record<string, Json> }).responses[name] as Json }
    }
    return { pointer: `/paths/${escapePointer(template)}/${method.toLowerCase()}/responses/${status}`, node }
  }

  /** Validates one answer; throws with ajv's errors when it does not match. */
  check(method: string, template: string, res: { status: number; headers: Headers }, body: unknown): void {
    this.seen.add(`${method} ${template} ${res.status}`)
    const { pointer, node } = this.#response(method, template, res.status)
    const content = node.content as Record<string, Json> | undefined
    const type = res.headers.get('content-type') ?? ''
    if (!content) return
    if (type.startsWith('application/json')) {
      if (!content['application/json']) throw new Error(`${method} ${template} ${res.status} answered JSON, the document lists ${Object.keys(content).join(', ')}`)
      const key = `${pointer}/content/application~1json/schema`
      let validate = this.#cache.get(key)
      if (!validate) {
        validate = this.#ajv.getSchema(`bank#${key}`)
        if (!validate) throw new Error(`no schema at ${key}`)
        this.#cache.set(key, validate)
      }
      if (!validate(body)) {
        throw new Error(`${method} ${template} ${res.status} does not match the OpenAPI document:\n${this.#ajv.errorsText(validate.errors, { separator: '\n' })}\nbody: ${JSON.stringify(body).slice(0, 2000)}`)
      }
    } else if (type.startsWith('text/html')) {
      if (!content['text/html']) throw new Error(`${method} ${template} ${res.status} answered HTML, the document lists ${Object.keys(content).join(', ')}`)
    } else if (res.status !== 302) {
      throw new Error(`${method} ${template} ${res.status} answered content-type ${type}`)
    }
  }
}
