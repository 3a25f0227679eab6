import { createServer } from 'node:net'

/** `preferred` when it is free on 127.0.0.1, otherwise any free port. */
export async function freePort(preferred = 0): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | undefined>((resolve) => {
      const server = createServer()
      server.once('error', () => resolve(undefined))
      server.listen(port, '127.0.0.1', () => {
        const address = server.address()
        const got = typeof address === 'object' && address ? address.port : undefined
        server.close(() => resolve(got))
      })
    })
  return (preferred > 0 ? await tryListen(preferred) : undefined) ?? (await tryListen(0)) ?? 0
}
