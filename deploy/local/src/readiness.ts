import { readFile } from 'node:fs/promises'
import { Admin } from '@platformatic/kafka'

/** Reports why waiting is pointless (the process exited), or undefined while it runs. */
export type ExitCheck = () => string | undefined

const POLL_MS = 200

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}

/** The last `lines` lines of a log file, for error messages; never throws. */
export async function tail(file: string, lines = 30): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '')
  return text.trimEnd().split('\n').slice(-lines).join('\n')
}

export class NotReadyError extends Error {
  readonly reason: 'exited' | 'timeout'
  constructor(message: string, reason: 'exited' | 'timeout') {
    super(message)
    this.name = 'NotReadyError'
    this.reason = reason
  }
}

/**
 * Polls until `check` resolves true. The daemons offer no event to await (their
 * output goes to files so they can outlive us), so this is a poll with a deadline
 * that also stops as soon as the process has exited.
 */
async function pollUntil(what: string, check: () => Promise<boolean>, deadline: number, exited: ExitCheck) {
  for (;;) {
    const exit = exited()
    if (exit) throw new NotReadyError(`${what}: the process ${exit} before it was ready`, 'exited')
    if (await check()) return
    if (Date.now() >= deadline) throw new NotReadyError(`${what}: not ready before the deadline`, 'timeout')
    await delay(POLL_MS)
  }
}

export function waitForLogLine(
  file: string,
  line: string,
  deadline: number,
  exited: ExitCheck,
): Promise<void> {
  return pollUntil(
    `waiting for "${line}" in ${file}`,
    async () => (await readFile(file, 'utf8').catch(() => '')).includes(line),
    deadline,
    exited,
  )
}

/** One metadata round-trip with a fresh admin; false on any failure or while fewer than `minBrokers` are registered. */
export async function brokerAnswers(brokers: string[], timeoutMs = 3_000, minBrokers = 1): Promise<boolean> {
  const admin = new Admin({
    clientId: 'local-stack-probe',
    bootstrapBrokers: brokers,
    connectTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retries: 0,
  })
  try {
    const cluster = await admin.metadata({ topics: [], forceUpdate: true })
    return cluster.brokers.size >= minBrokers && cluster.controllerId >= 0
  } catch {
    return false
  } finally {
    await admin.close().catch(() => {})
  }
}

/** True when the registry's Confluent-compatible API lists subjects (200 + JSON array). */
export async function registryAnswers(registryUrl: string, timeoutMs = 3_000): Promise<boolean> {
  try {
    const res = await fetch(`${registryUrl}/subjects`, { signal: AbortSignal.timeout(timeoutMs) })
    if (res.status !== 200) {
      await res.body?.cancel()
      return false
    }
    return Array.isArray(await res.json())
  } catch {
    return false
  }
}

export function waitForBroker(brokers: string[], deadline: number, exited: ExitCheck, minBrokers = 1): Promise<void> {
  return pollUntil(
    `waiting for the broker at ${brokers.join(',')}`,
    () => brokerAnswers(brokers, 3_000, minBrokers),
    deadline,
    exited,
  )
}

export function waitForRegistry(registryUrl: string, deadline: number, exited: ExitCheck): Promise<void> {
  return pollUntil(
    `waiting for the registry at ${registryUrl}`,
    () => registryAnswers(registryUrl),
    deadline,
    exited,
  )
}
