/**
 * The floor of lookup-cpu.ts: the same GET lookups (same query, same headers, a
 * bearer token fetched once) sent with bare undici, no client around them, to
 * tell the client's own cost from undici's and the kernel's. `mode`:
 *   request   Agent.request and body.text() (undici's stream-based API)
 *   dispatch  Agent.dispatch with a handler that gathers the body (no stream)
 *
 *   node test/bench/lookup-floor.ts <simUrl> [mode=request] [lookups=20000] [concurrency=16] [warmup=5000] [connections]
 */
import { Agent, Pool, type Dispatcher } from 'undici'
import { generateRawEvents } from '@tep/sample-traffic'
import { SimDataset } from '@tep/sim-data'
import { cardLookupInput } from '@tep/transaction-ingest'
import { buildQueryString } from '@tep/http'
import { cardInputToQuery } from '@tep/enrichment-client'
import { SIM_CREDENTIALS } from './processors.ts'

const [url = 'http://127.0.0.1:18080', mode = 'request', countArg = '20000', concArg = '16', warmArg = '5000', connArg] = process.argv.slice(2)
const count = Number(countArg)
const concurrency = Number(concArg)
const origin = new URL(url).origin
const paths = generateRawEvents(new SimDataset(), { count: 5_000, seed: 31, kind: 'card', idPrefix: 'cpu' })
  .filter((e) => e.raw.card !== null)
  .map((e) => `/v5/shops/findByCardTransaction?${buildQueryString(cardInputToQuery(cardLookupInput(e.raw, e.raw.card!)))}`)
const agent: Dispatcher =
  connArg === undefined ? new Agent({ keepAliveTimeout: 4_000 }) : new Pool(origin, { connections: Number(connArg), pipelining: 1 })

const tokenRes = await agent.request({
  origin,
  path: '/auth/protocol/openid-connect/token',
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'client_credentials', client_id: SIM_CREDENTIALS.clientId, client_secret: SIM_CREDENTIALS.clientSecret }).toString(),
})
const token = ((await tokenRes.body.json()) as { access_token: string }).access_token
const headers = { accept: 'application/json', 'user-agent': 'tep-http/0.1', authorization: `Bearer ${token}` }

function viaRequest(path: string): Promise<number> {
  return agent.request({ origin, path, method: 'GET', headers }).then(async (res) => {
    await res.body.text()
    return res.statusCode
  })
}

function viaDispatch(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let status = 0
    const chunks: Buffer[] = []
    agent.dispatch(
      { origin, path, method: 'GET', headers },
      {
        onRequestStart() {},
        onResponseStart(_c, statusCode) {
          status = statusCode
        },
        onResponseData(_c, chunk) {
          chunks.push(chunk)
        },
        onResponseEnd() {
          Buffer.concat(chunks).toString('utf8')
          resolve(status)
        },
        onResponseError(_c, err) {
          reject(err)
        },
      },
    )
  })
}

const send = mode === 'dispatch' ? viaDispatch : viaRequest
async function run(n: number): Promise<Record<string, number>> {
  let next = 0
  const statuses: Record<string, number> = {}
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++
      const s = await send(paths[i % paths.length]!)
      statuses[s] = (statuses[s] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return statuses
}

await run(Number(warmArg))
const before = process.cpuUsage()
const statuses = await run(count)
const used = process.cpuUsage(before)
process.stdout.write(
  `${JSON.stringify({ mode, lookups: count, concurrency, cpuUsPerLookup: Math.round(((used.user + used.system) / count) * 10) / 10, userUs: Math.round(used.user / count), systemUs: Math.round(used.system / count), statuses })}\n`,
)
await agent.close()
