/**
 * Kafka TLS and SASL against a real broker: a local stack with a SASL_SSL
 * listener (CA and broker certificate generated for the test, a PLAIN and a
 * SCRAM-SHA-512 user). Clients configured from the documented variables
 * (KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_*, KAFKA_SSL_CA_FILE) produce and consume
 * over it with both mechanisms; a wrong password and an untrusted certificate
 * are refused; and a service process (bank-sync) started with only those
 * variables reaches the broker over SASL_SSL and reports ready.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Admin } from '@platformatic/kafka'
import { clientOptions, createKafka, createKafkaAdmin, createRecordProducer, kafkaSecurityFromEnv, type Kafka } from '@tep/kafka'
import { startStack, type RunningStack } from '@tep/local-stack'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'

let stack: RunningStack
let secure: NonNullable<RunningStack['secure']>
const children: ChildProcess[] = []

beforeAll(async () => {
  stack = await startStack({
    stateDir: await mkdtemp(path.join(tmpdir(), 'tep-sasl-ssl-')),
    secureListener: {},
    startTimeoutMs: 280_000,
  })
  secure = stack.secure!
}, 300_000)

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
  await stack?.stop()
})

function envFor(mechanism: 'PLAIN' | 'SCRAM-SHA-512', password?: string): Record<string, string> {
  const user = mechanism === 'PLAIN' ? secure.plain : secure.scram
  return {
    KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: user.username,
    KAFKA_SASL_PASSWORD: password ?? user.password,
    KAFKA_SSL_CA_FILE: secure.caFile,
  }
}

async function createTopics(kafka: Kafka, topics: string[]): Promise<void> {
  const admin = createKafkaAdmin(kafka)
  try {
    await admin.createTopics({ topics, partitions: 1, replicas: -1 })
    await waitFor('the new topics to have leaders', async () => {
      const metadata = await admin.metadata({ topics, forceUpdate: true }).catch(() => undefined)
      return metadata !== undefined && topics.every((t) => metadata.topics.get(t)?.partitions.every((p) => p.leader >= 0) === true)
    })
  } finally {
    await admin.close()
  }
}

/** The messages of the error (and of the errors it wraps) a metadata request of a client without retries fails with. */
async function connectFailure(kafka: Kafka): Promise<string> {
  const admin = new Admin({ ...clientOptions(kafka), retries: 0 })
  try {
    await admin.metadata({ topics: [] })
    return 'connected'
  } catch (err) {
    const messages: string[] = []
    const walk = (e: unknown, depth: number): void => {
      if (e === null || typeof e !== 'object' || depth > 5) return
      const { message, cause, errors } = e as { message?: unknown; cause?: unknown; errors?: unknown }
      if (typeof message === 'string') messages.push(message)
      walk(cause, depth + 1)
      if (Array.isArray(errors)) for (const inner of errors) walk(inner, depth + 1)
    }
    walk(err, 0)
    return messages.join(' | ')
  } finally {
    await admin.close().catch(() => {})
  }
}

describe('Kafka over SASL_SSL', () => {
  it.each(['SCRAM-SHA-512', 'PLAIN'] as const)(
    'produces and consumes with %s from the documented variables',
    async (mechanism) => {
      const kafka = createKafka({
        brokers: secure.brokers,
        clientId: `sasl-${mechanism}`,
        logLevel: 'error',
        security: kafkaSecurityFromEnv(envFor(mechanism)),
      })
      const topic = `sasl-ssl-${mechanism.toLowerCase()}-${Date.now()}`
      await createTopics(kafka, [topic])
      const producer = createRecordProducer(kafka)
      await producer.send(topic, [{ key: 'k', value: Buffer.from(`over ${mechanism}`) }])
      await producer.close()
      const seen = (await readTopic(kafka, topic)).map((m) => String(m.value))
      expect(seen).toEqual([`over ${mechanism}`])
    },
  )

  it('check-topics reads the same variables and checks topics over SASL_SSL (PLAIN and SCRAM-SHA-512)', async () => {
    const kafka = createKafka({ brokers: secure.brokers, clientId: 'sasl-check-topics', logLevel: 'error', security: kafkaSecurityFromEnv(envFor('SCRAM-SHA-512')) })
    const suffix = Date.now()
    const topics = { raw: `sasl.check.raw.${suffix}`, enriched: `sasl.check.enriched.${suffix}`, dlq: `sasl.check.dlq.${suffix}` }
    await createTopics(kafka, Object.values(topics))
    const producer = createRecordProducer(kafka)
    await producer.send(topics.raw, [{ key: 'tx-1', value: Buffer.from('raw') }, { key: 'tx-2', value: Buffer.from('raw') }])
    await producer.send(topics.enriched, [{ key: 'tx-1', value: Buffer.from('enriched') }])
    await producer.close()
    const checkTopics = (env: Record<string, string>) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [path.resolve('tools/check-topics/src/main.ts'), '--brokers', secure.brokers.join(','), '--no-registry', '--raw', topics.raw, '--enriched', topics.enriched, '--dlq', topics.dlq, '--timeout', '60'],
          { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
        )
        children.push(child)
        let stdout = ''
        let stderr = ''
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
        child.on('close', (code) => resolve({ code, stdout, stderr }))
      })
    for (const mechanism of ['PLAIN', 'SCRAM-SHA-512'] as const) {
      const { code, stdout, stderr } = await checkTopics(envFor(mechanism))
      // Read over SASL_SSL: tx-2 has no outcome, so the check finds it (exit 1, not 2 "could not read").
      expect({ code, stderr: code === 1 ? '' : stderr }).toEqual({ code: 1, stderr: '' })
      const summary = JSON.parse(stdout) as { lost: number; raw: { records: number }; samples: { lost: string[] } }
      expect(summary.raw.records).toBe(2)
      expect(summary.samples.lost).toEqual(['tx-2'])
    }
    // Without the variables it talks plaintext to the TLS listener and cannot read.
    const plaintext = await checkTopics({ KAFKA_SECURITY_PROTOCOL: '', KAFKA_SASL_MECHANISM: '', KAFKA_SASL_USERNAME: '', KAFKA_SASL_PASSWORD: '', KAFKA_SSL_CA_FILE: '' })
    expect(plaintext.code).toBe(2)
  })

  it('refuses a wrong password and a broker certificate the client does not trust', async () => {
    const wrong = createKafka({
      brokers: secure.brokers,
      clientId: 'sasl-wrong',
      logLevel: 'error',
      security: kafkaSecurityFromEnv(envFor('SCRAM-SHA-512', 'not-the-password')),
    })
    expect(await connectFailure(wrong)).toMatch(/SASL|authentication/i)
    const { KAFKA_SSL_CA_FILE: _ca, ...systemCas } = envFor('SCRAM-SHA-512')
    const untrusted = createKafka({
      brokers: secure.brokers,
      clientId: 'sasl-untrusted',
      logLevel: 'error',
      security: kafkaSecurityFromEnv(systemCas),
    })
    expect(await connectFailure(untrusted)).toMatch(/certificate|self.signed|unable to verify/i)
  })

  it('a service started with only the variables connects over SASL_SSL and becomes ready', async () => {
    const metricsPort = 19_000 + Math.floor(Math.random() * 1000)
    const suffix = Date.now()
    const child = spawn(process.execPath, [path.resolve('services/bank-sync/src/main.ts')], {
      env: {
        ...process.env,
        ...envFor('SCRAM-SHA-512'),
        KAFKA_BROKERS: secure.brokers.join(','),
        SCHEMA_REGISTRY_URL: stack.registryUrl,
        BANK_API_URL: 'http://127.0.0.1:9',
        // No keys: the test is about Kafka, the public development keys will do.
        BANK_SYNC_DEVELOPMENT_KEYS: 'true',
        METRICS_PORT: String(metricsPort),
        CONSENT_GATEWAY_PORT: '0',
        BANK_CONSENTS_TOPIC: `sasl.bank.consents.${suffix}`,
        BANK_TRANSACTIONS_TOPIC: `sasl.bank.transactions.${suffix}`,
        BANK_RAW_TOPIC: `sasl.raw.${suffix}`,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let output = ''
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()))
    await waitFor(
      'bank-sync to own its consents partitions over SASL_SSL',
      async () => {
        if (child.exitCode !== null) throw new Error(`bank-sync exited ${child.exitCode}: ${output.slice(-2000)}`)
        const res = await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => undefined)
        if (res === undefined) return false
        const body = (await res.json()) as { checks?: Record<string, { ready: boolean }> }
        return body.checks?.consents?.ready === true
      },
      { timeoutMs: 80_000, intervalMs: 500 },
    )
    child.kill('SIGTERM')
  })
})
