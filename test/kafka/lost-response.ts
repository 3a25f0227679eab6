/**
 * Fault injection for KafkaJS: a socket factory that lets the broker handle the
 * first request of one kind (Produce) but loses its response by closing
 * the connection the moment the response arrives. The broker has acted (records
 * appended) while the client sees a closed connection:
 * the "outcome unknown" case, made deterministic.
 */
import net from 'node:net'
import type { ISocketFactory } from 'kafkajs'

/** Kafka protocol API keys of the requests a test may want to lose the answer to. */
export const API_KEYS = { produce: 0 } as const

export interface LostResponse {
  socketFactory: ISocketFactory
  /** True once a response was dropped. */
  dropped(): boolean
}

export function loseFirstResponse(apiKey: number): LostResponse {
  let armed = true
  let droppedOne = false
  const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = net.connect({ host, port }, onConnect)
    let target: number | undefined
    let pending = Buffer.alloc(0)
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean
    // KafkaJS writes each request as one buffer: size, api key, version, correlation id.
    socket.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (armed && Buffer.isBuffer(chunk) && chunk.length >= 12 && chunk.readInt16BE(4) === apiKey) {
        armed = false
        target = chunk.readInt32BE(8)
      }
      return write(chunk, ...rest)
    }) as typeof socket.write
    const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean
    socket.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event !== 'data' || target === undefined) return emit(event, ...args)
      // Re-frame the responses (size, correlation id, ...) and pass on all but the target.
      pending = Buffer.concat([pending, args[0] as Buffer])
      while (pending.length >= 8 && pending.length >= 4 + pending.readInt32BE(0)) {
        const frame = pending.subarray(0, 4 + pending.readInt32BE(0))
        pending = pending.subarray(frame.length)
        if (frame.readInt32BE(4) === target) {
          target = undefined
          droppedOne = true
          // As if the broker closed the connection: KafkaJS fails the request with a
          // retriable KafkaJSConnectionClosedError on 'end' (it does not watch 'close').
          emit('end')
          socket.destroy()
          return true
        }
        emit('data', frame)
      }
      return true
    }) as typeof socket.emit
    socket.setKeepAlive(true, 60_000)
    return socket
  }
  return { socketFactory, dropped: () => droppedOne }
}
