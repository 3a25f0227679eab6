import type { IncomingHttpHeaders } from 'node:http'
import type { Dispatcher } from 'undici'
import type { Exchange } from './request-response.ts'

/** A response body larger than the client accepts (maxResponseBytes). */
export class BodyTooLargeError extends Error {
  readonly limit: number
  constructor(limit: number) {
    super(`response body exceeds ${limit} bytes`)
    this.limit = limit
  }
}


export interface CollectLimits {
  /** Largest 2xx body accepted; a longer one is refused (BodyTooLargeError). */
  okBytes: number
  /** Largest non-2xx body kept; a longer one is cut (error bodies only need their start). */
  errorBytes: number
}

/**
 * Sends one request through `dispatcher.dispatch` and gathers the answer's body
 * as text, at most the limit's bytes: a longer success body is refused, a longer
 * error body is cut and its connection dropped without reading the rest.
 *
 * Why not undici's `request()`: for every request it builds an AsyncResource, a
 * Readable stream for the body and a consumer promise over it, and its `body.text()`
 * concatenates the chunks again; for an API answer of a few hundred bytes that was
 * most of undici's own JavaScript per request and a large part of the garbage
 * (docs/benchmarks.md, "Method"). A dispatch handler receives the chunks directly.
 * Timeouts (headersTimeout, bodyTimeout) are dispatch options handled by undici as
 * before; the abort signal is handled here, as `request()` did.
 */
export function collectResponse(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal | undefined,
  limits: CollectLimits,
): ResponseCollector {
  const collector = new ResponseCollector(signal, options.method === 'HEAD', limits)
  if (signal?.aborted === true) {
    collector.onResponseError(null, signal.reason as Error)
    return collector
  }
  try {
    dispatcher.dispatch(options, collector)
  } catch (err) {
    // A dispatcher that is not undici's own base class may throw instead of calling onResponseError.
    collector.onResponseError(null, err as Error)
  }
  return collector
}

/** The dispatch handler (undici's handler interface) that gathers one response. */
export class ResponseCollector implements Dispatcher.DispatchHandler {
  /** Settles with the response, or with the failure (undici's error, the abort reason, BodyTooLargeError). */
  readonly done: Promise<Exchange>
  #resolve!: (value: Exchange) => void
  #reject!: (reason: unknown) => void
  readonly #signal: AbortSignal | undefined
  readonly #head: boolean
  readonly #limits: CollectLimits
  #onAbort: (() => void) | undefined
  #controller: Dispatcher.DispatchController | undefined
  #settled = false
  #status = 0
  #headers: IncomingHttpHeaders = {}
  #limit = 0
  #truncate = false
  /** The first chunk alone (the common case: one chunk), or every chunk in `#chunks`. */
  #first: Buffer | undefined
  #chunks: Buffer[] | undefined
  #size = 0

  constructor(signal: AbortSignal | undefined, head: boolean, limits: CollectLimits) {
    this.done = new Promise<Exchange>((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
    this.#signal = signal
    this.#head = head
    this.#limits = limits
    if (signal === undefined) return
    // Listened to from the start: a request still queued inside undici (no
    // connection yet) is given up at once, as `request()` did.
    this.#onAbort = () => {
      const controller = this.#controller
      if (controller === undefined) this.#fail(signal.reason)
      else controller.abort(signal.reason)
    }
    signal.addEventListener('abort', this.#onAbort, { once: true })
  }

  /** The final answer's status once its headers arrived, else 0 (a failure before any answer). */
  get status(): number {
    return this.#status
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Given up (aborted) before undici started it: nothing is sent.
    if (this.#settled) {
      controller.abort(this.#signal?.reason ?? new Error('request given up before it started'))
      return
    }
    this.#controller = controller
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    // 1xx answers are informational: the final one follows.
    if (statusCode < 200) return
    this.#status = statusCode
    this.#headers = headers
    const ok = statusCode >= 200 && statusCode < 300
    this.#limit = ok ? this.#limits.okBytes : this.#limits.errorBytes
    this.#truncate = !ok
    // A HEAD answer's Content-Length describes the body a GET would get; it has none.
    const header = this.#head ? undefined : headers['content-length']
    if (
      !this.#truncate &&
      typeof header === 'string' &&
      /^[0-9]+$/.test(header) &&
      Number(header) > this.#limit
    ) {
      this.#fail(new BodyTooLargeError(this.#limit))
      controller.abort(new BodyTooLargeError(this.#limit))
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return
    if (this.#size + chunk.length > this.#limit) {
      if (!this.#truncate) {
        this.#fail(new BodyTooLargeError(this.#limit))
        controller.abort(new BodyTooLargeError(this.#limit))
        return
      }
      this.#add(chunk.subarray(0, this.#limit - this.#size))
      // Error bodies only need their start; the rest is dropped with the connection, unread.
      this.#succeed()
      controller.abort(new BodyTooLargeError(this.#limit))
      return
    }
    this.#add(chunk)
  }

  onResponseEnd(): void {
    if (!this.#settled) this.#succeed()
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    this.#fail(err)
  }

  #add(chunk: Buffer): void {
    this.#size += chunk.length
    if (this.#first === undefined && this.#chunks === undefined) {
      this.#first = chunk
      return
    }
    if (this.#chunks === undefined) {
      this.#chunks = [this.#first!]
      this.#first = undefined
    }
    this.#chunks.push(chunk)
  }

  #succeed(): void {
    this.#settled = true
    this.#cleanUp()
    const text =
      this.#chunks !== undefined
        ? Buffer.concat(this.#chunks, this.#size).toString('utf8')
        : this.#first === undefined
          ? ''
          : this.#first.toString('utf8')
    this.#resolve({ status: this.#status, headers: this.#headers, text })
  }

  #fail(err: unknown): void {
    if (this.#settled) return
    this.#settled = true
    this.#cleanUp()
    this.#reject(err)
  }

  #cleanUp(): void {
    if (this.#onAbort !== undefined) this.#signal!.removeEventListener('abort', this.#onAbort)
    this.#onAbort = undefined
    this.#controller = undefined
  }
}
