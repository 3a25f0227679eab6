import { logLevel } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { pinoLogCreator, type KafkaLogger } from './logger.ts'

function recorder() {
  const lines: { level: string; obj: object; msg?: string }[] = []
  const logger: KafkaLogger = {
    debug: (obj, msg) => lines.push({ level: 'debug', obj, msg }),
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  }
  return { lines, logger }
}

describe('pinoLogCreator', () => {
  it('maps KafkaJS levels and keeps structured fields with the namespace', () => {
    const { lines, logger } = recorder()
    const log = pinoLogCreator(logger)(logLevel.INFO)
    log({
      namespace: 'Consumer',
      level: logLevel.INFO,
      label: 'INFO',
      log: { message: 'Starting', timestamp: 't', logger: 'kafkajs', groupId: 'g' },
    })
    log({
      namespace: 'Producer',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { message: 'Broker down', timestamp: 't', logger: 'kafkajs' },
    })
    log({
      namespace: 'Cluster',
      level: logLevel.DEBUG,
      label: 'DEBUG',
      log: { message: 'x', timestamp: 't', logger: 'kafkajs' },
    })
    expect(lines).toEqual([
      { level: 'info', obj: { kafkajs: 'Consumer', groupId: 'g' }, msg: 'Starting' },
      { level: 'error', obj: { kafkajs: 'Producer' }, msg: 'Broker down' },
      { level: 'debug', obj: { kafkajs: 'Cluster' }, msg: 'x' },
    ])
  })

  it('downgrades errors KafkaJS retries by itself to warnings', () => {
    const { lines, logger } = recorder()
    pinoLogCreator(logger)(logLevel.INFO)({
      namespace: 'Connection',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: {
        message: 'Response AddPartitionsToTxn(key: 24, version: 1)',
        error: 'There is a newer producer... CONCURRENT_TRANSACTIONS',
        timestamp: 't',
        logger: 'kafkajs',
      },
    })
    expect(lines[0]?.level).toBe('warn')
  })
})
