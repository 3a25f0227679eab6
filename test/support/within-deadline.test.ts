import { createLogger } from '@tep/observability'
import { describe, expect, it } from 'vitest'
import { captureLog } from './log-capture.ts'
import { withinDeadline } from './within-deadline.ts'

describe('withinDeadline', () => {
  it('returns what the work returns when it settles in time', async () => {
    await expect(withinDeadline(5_000, () => 'unused', async () => 42)).resolves.toBe(42)
  })

  it('fails with the explanation when the work never settles', async () => {
    const never = new Promise<never>(() => undefined)
    await expect(withinDeadline(20, () => 'stuck at step 3', () => never)).rejects.toThrow(
      /not done within 20 ms: stuck at step 3/,
    )
  })

  it('passes the work\'s own failure through', async () => {
    await expect(withinDeadline(5_000, () => 'unused', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
  })
})

describe('captureLog', () => {
  it('keeps the last lines a pino logger wrote, oldest dropped past the limit', async () => {
    const log = captureLog(3)
    const logger = createLogger({ name: 'capture-test', destination: log.destination })
    for (let i = 1; i <= 5; i++) logger.info(`line ${i}`)
    await new Promise((r) => log.destination.write('', r))
    const tail = log.tail(10).split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg)
    expect(tail).toEqual(['line 3', 'line 4', 'line 5'])
  })
})
