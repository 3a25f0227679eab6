import { describe, expect, it } from 'vitest'
import { HttpStatusError, type RequestContext } from './errors.ts'

const context = { operation: 'test.op', method: 'GET', url: 'https://api.example.com/x', attempt: 1 } as RequestContext

describe('an error answer body', () => {
  const body = JSON.stringify({ errors: [{ code: 'X', detail: 'y'.repeat(60 * 1024) }] })
  const err = new HttpStatusError(context, { status: 500, retriable: true, bodySnippet: body.slice(0, 300) + '...', bodyText: body, headers: {} })

  it('stays whole for the API clients to parse', () => {
    expect(err.bodyText).toBe(body)
    expect(err.bodyJson()).toMatchObject({ errors: [{ code: 'X' }] })
  })

  it('is left out of what a logger serialises (enumerable properties, JSON): only the bounded snippet, not 64 KiB', () => {
    // pino's error serializer copies the enumerable properties (for...in).
    const logged: Record<string, unknown> = {}
    for (const key in err) logged[key] = (err as unknown as Record<string, unknown>)[key]
    expect(Object.keys(logged)).not.toContain('bodyText')
    const line = JSON.stringify({ ...logged, message: err.message })
    expect(line.length).toBeLessThan(2 * 1024)
  })
})
