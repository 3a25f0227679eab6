import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ContractDrift } from '@tep/observability'
import { createBankClient, type BankClient, type BankClientOptions } from './bank-client.ts'

export interface FakeAnswer {
  status: number
  body?: unknown
}

export interface FakeBank {
  client: BankClient
  /** Every request: method, path. */
  requests: Array<{ method: string; path: string }>
  drifts: ContractDrift[]
  close(): Promise<void>
}

/** A client of the bank at `baseUrl` with a fixed access token and clock, and no retries. */
export function testBankClient(baseUrl: string, options: Partial<BankClientOptions> = {}): BankClient {
  return createBankClient({
    baseUrl,
    clientId: 'c',
    clientSecret: 's',
    redirectUri: 'http://127.0.0.1/cb',
    tppName: 'TEP',
    accessToken: 'token',
    retry: { retries: 0 },
    now: () => new Date('2026-03-02T09:00:00Z'),
    ...options,
  })
}

/**
 * A bank on loopback that answers every request with `answer(method, path)`: enough to show
 * what the client does with answers the simulator never gives.
 */
export async function startFakeBank(
  answer: (method: string, path: string) => FakeAnswer,
  options: Partial<BankClientOptions> = {},
): Promise<FakeBank> {
  const requests: FakeBank['requests'] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      const method = req.method ?? 'GET'
      const path = (req.url ?? '/').split('?')[0] ?? '/'
      requests.push({ method, path })
      const a = answer(method, path)
      const text = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body)
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const drifts: ContractDrift[] = []
  const client = testBankClient(`http://127.0.0.1:${port}`, { onContractDrift: (d) => drifts.push(d), ...options })
  return {
    client,
    requests,
    drifts,
    async close() {
      await client.close()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
