/**
 * Canned HTTP answers for the in-process benches (lookup-js.ts, ingest-transform.ts):
 * an undici dispatch handler fed a whole answer on the next event-loop turn, as a
 * socket read would deliver it, with no socket, parser or second process.
 */
import type { Dispatcher } from 'undici'

export interface CannedAnswer {
  status: number
  headers: Record<string, string>
  body: Buffer
}

/** A JSON answer with the headers the simulator sends. */
export function jsonAnswer(status: number, body: unknown): CannedAnswer {
  const buf = Buffer.from(JSON.stringify(body))
  return {
    status,
    headers: { 'x-request-id': 'req-1', 'content-type': 'application/json; charset=utf-8', 'content-length': String(buf.length), connection: 'keep-alive' },
    body: buf,
  }
}

/** Feeds `answer` to `handler` on the next turn of the event loop. */
export function answerOnNextTurn(handler: Dispatcher.DispatchHandler, answer: CannedAnswer): void {
  setImmediate(() => {
    const controller = { abort() {}, pause() {}, resume() {}, paused: false, aborted: false, reason: null, rawHeaders: [] }
    handler.onRequestStart?.(controller as never, {})
    handler.onResponseStart?.(controller as never, answer.status, answer.headers, 'OK')
    handler.onResponseData?.(controller as never, answer.body)
    handler.onResponseEnd?.(controller as never, {})
  })
}
