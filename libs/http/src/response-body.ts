import type { Dispatcher } from 'undici'

/** A response body larger than the client accepts (maxResponseBytes). */
export class BodyTooLargeError extends Error {
  readonly limit: number
  constructor(limit: number) {
    super(`response body exceeds ${limit} bytes`)
    this.limit = limit
  }
}

/**
 * Reads a response body as UTF-8 text, at most `limit` bytes: a longer success
 * body is refused (BodyTooLargeError), a longer error body is cut (`truncate`).
 */
export async function readBody(
  res: Dispatcher.ResponseData,
  head: boolean,
  limit: number,
  truncate: boolean,
): Promise<string> {
  const body = res.body
  // A HEAD answer's Content-Length describes the body a GET would get; it has none.
  const header = head ? undefined : res.headers['content-length']
  const length = typeof header === 'string' && /^[0-9]+$/.test(header) ? Number(header) : undefined
  if (length !== undefined && length <= limit) {
    // The framing bounds the body, so undici's own collector can read it: much
    // cheaper per response than iterating the stream asynchronously.
    const bytes = await body.bytes()
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
  }
  if (length !== undefined && !truncate) {
    // Nobody reads this stream, so the AbortError its destruction emits needs a listener.
    body.on('error', ignore)
    body.destroy()
    throw new BodyTooLargeError(limit)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const buf = chunk as Buffer
    if (size + buf.length > limit) {
      if (!truncate) {
        body.destroy()
        throw new BodyTooLargeError(limit)
      }
      chunks.push(buf.subarray(0, limit - size))
      size = limit
      // Error bodies only need their start; drop the rest without reading it.
      body.destroy()
      break
    }
    chunks.push(buf)
    size += buf.length
  }
  return Buffer.concat(chunks, size).toString('utf8')
}

function ignore(): void {}
