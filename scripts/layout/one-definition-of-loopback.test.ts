import { isLoopbackHost, parse } from '@tep/config'
import { assertSecureUrl } from '@tep/http'
import { checkRegistryTransport } from '@tep/kafka'
import { describe, expect, it } from 'vitest'

/**
 * Plain http is allowed for loopback only, in three places: the service URLs of every
 * configuration (@tep/config), the HTTP clients (@tep/http) and the schema registry (@tep/kafka).
 * They had three definitions that disagreed (`LOCALHOST`, `api.localhost`, `::ffff:127.0.0.1`
 * were loopback for one and not another); now one decides for all three.
 */
const LOOPBACK = ['127.0.0.1', '127.8.9.10', 'localhost', 'LOCALHOST', 'api.localhost', '[::1]', '[0:0:0:0:0:0:0:1]', '[::ffff:127.0.0.1]']
const NOT_LOOPBACK = ['128.0.0.1', '10.0.0.1', '0.0.0.0', 'localhost.example.com', 'example.com', '[::2]', '[::ffff:10.0.0.1]', '127.example.com']

function verdicts(host: string): Record<string, boolean> {
  const url = `http://${host}:8080/x`
  const config = parse.serviceUrl({ httpsUnlessLoopback: true }).safeParse(url).success
  let http = true
  try {
    assertSecureUrl(url, 'TEST_URL')
  } catch {
    http = false
  }
  // Without credentials, plain http off loopback is allowed with a warning: the warning is the verdict.
  const kafka = checkRegistryTransport(url, false) === undefined
  return { config, http, kafka, isLoopbackHost: isLoopbackHost(new URL(url).hostname) }
}

describe('one definition of loopback', () => {
  it.each(LOOPBACK)('every place allows plain http to %s', (host) => {
    expect(verdicts(host)).toEqual({ config: true, http: true, kafka: true, isLoopbackHost: true })
  })

  it.each(NOT_LOOPBACK)('every place refuses (or warns about) plain http to %s', (host) => {
    expect(verdicts(host)).toEqual({ config: false, http: false, kafka: false, isLoopbackHost: false })
  })
})
