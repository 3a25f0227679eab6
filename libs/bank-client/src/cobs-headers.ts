import { randomUUID } from 'node:crypto'
import { BankInvalidArgumentError } from './errors.ts'

/**
 * What the application knows about the end user for this call. COBS 3.0 asks for it so the
 * bank can tell attended from unattended access (PSD2 allows only a few unattended account
 * reads a day) and assess fraud. Leave fields out when unknown; never invent them.
 */
export interface UserContext {
  /** True when the user is online and triggered the call (`User-Involved`). Default false. */
  involved?: boolean
  ipAddress?: string
  ipPort?: string | number
  deviceOs?: string
  userAgent?: string
  /** The time on the user's device; a Date is sent as an HTTP-date. */
  timestamp?: string | Date
  /** `GEO:lat;lon` in signed degrees. */
  geoLocation?: string
  deviceId?: string
}

export interface CobsHeaderInput {
  requestId: string
  clientId: string
  tppName: string | undefined
  tppIdentification: string | undefined
  now: Date
  accessToken?: string | undefined
  user?: UserContext | undefined
}

/** Longest values COBS allows; the bank refuses longer ones. */
const MAX_LENGTH: Readonly<Record<string, number>> = {
  'X-Request-ID': 60,
  'TPP-Name': 100,
  'User-IP-Address': 50,
  'User-IP-Port': 40,
  'User-Device-OS': 100,
  'User-Geo-Location': 100,
}
const USER_AGENT_MAX = 200
const GEO = /^GEO:-?\d{1,2}(\.\d+)?;-?\d{1,3}(\.\d+)?$/

/** A fresh request id: a UUID, as COBS advises. */
export function newRequestId(): string {
  return randomUUID()
}

function checked(name: string, value: string): string {
  // Header injection guard and the standard's character set: visible ASCII and spaces only.
  if (!/^[\x20-\x7e]*$/.test(value)) {
    throw new BankInvalidArgumentError(name, `header ${name} must be printable ASCII without line breaks`)
  }
  const max = MAX_LENGTH[name]
  if (max !== undefined && value.length > max) {
    throw new BankInvalidArgumentError(
      name,
      `header ${name} is at most ${max} characters, got ${value.length}`,
    )
  }
  return value
}

/**
 * The COBS 3.0 request headers for one call: X-Request-ID, Date (HTTP-date), TPP-Name,
 * TPP-Identification, User-Involved and the User-* family, X-IBM-Client-Id (the gateway key)
 * and the bearer token.
 */
export function buildCobsHeaders(input: CobsHeaderInput): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Request-ID': checked('X-Request-ID', input.requestId),
    'X-IBM-Client-Id': checked('X-IBM-Client-Id', input.clientId),
    Date: input.now.toUTCString(),
    'User-Involved': input.user?.involved === true ? 'true' : 'false',
  }
  if (input.tppName !== undefined) headers['TPP-Name'] = checked('TPP-Name', input.tppName)
  if (input.tppIdentification !== undefined)
    headers['TPP-Identification'] = checked('TPP-Identification', input.tppIdentification)
  if (input.accessToken !== undefined) {
    if (!/^[\x21-\x7e]+$/.test(input.accessToken)) {
      throw new BankInvalidArgumentError(
        'accessToken',
        'access token must be non-empty printable ASCII without spaces',
      )
    }
    headers.Authorization = `Bearer ${input.accessToken}`
  }
  const u = input.user
  if (u) {
    if (u.ipAddress !== undefined) headers['User-IP-Address'] = checked('User-IP-Address', u.ipAddress)
    if (u.ipPort !== undefined) headers['User-IP-Port'] = checked('User-IP-Port', String(u.ipPort))
    if (u.deviceOs !== undefined) headers['User-Device-OS'] = checked('User-Device-OS', u.deviceOs)
    // Browser user agents can exceed the standard's 200 characters; the start identifies the browser.
    if (u.userAgent !== undefined)
      headers['User-User-Agent'] = checked('User-User-Agent', u.userAgent.slice(0, USER_AGENT_MAX))
    if (u.timestamp !== undefined) {
      headers['User-Timestamp'] = checked(
        'User-Timestamp',
        u.timestamp instanceof Date ? u.timestamp.toUTCString() : u.timestamp,
      )
    }
    if (u.geoLocation !== undefined) {
      if (!GEO.test(u.geoLocation)) {
        throw new BankInvalidArgumentError(
          'User-Geo-Location',
          `header User-Geo-Location must look like GEO:50.0875;14.4213, got ${JSON.stringify(u.geoLocation)}`,
        )
      }
      headers['User-Geo-Location'] = checked('User-Geo-Location', u.geoLocation)
    }
    if (u.deviceId !== undefined) headers['User-Device-ID'] = checked('User-Device-ID', u.deviceId)
  }
  return headers
}
