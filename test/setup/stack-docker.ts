import { KafkaContainer } from '@testcontainers/kafka'
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers'
import type { TestStack } from './stack-backend.ts'

/** Confluent Platform 7.9 ships Apache Kafka 3.9, the same broker as the local backend. */
export const KAFKA_IMAGE = process.env.KAFKA_IMAGE ?? 'confluentinc/cp-kafka:7.9.5'
export const REGISTRY_IMAGE = process.env.REGISTRY_IMAGE ?? 'apicurio/apicurio-registry:3.3.3'

/**
 * The same pair in containers. `KafkaContainer` already sets offsets replication
 * and the rebalance delay for one node; the transaction log and auto-creation are
 * set here to match the local broker (deploy/local/src/config-files.ts).
 */
export async function startDockerStack(log: (line: string) => void): Promise<TestStack> {
  const [kafka, registry] = await Promise.allSettled([
    new KafkaContainer(KAFKA_IMAGE)
      .withKraft()
      .withEnvironment({
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
        KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS: '1',
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
      })
      .start(),
    new GenericContainer(REGISTRY_IMAGE)
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHttp('/apis/ccompat/v7/subjects', 8080).forStatusCode(200))
      .withStartupTimeout(180_000)
      .start(),
  ])
  const started = [kafka, registry].flatMap((r) =>
    r.status === 'fulfilled' ? [r.value as StartedTestContainer] : [],
  )
  if (kafka.status === 'rejected' || registry.status === 'rejected') {
    await Promise.allSettled(started.map((c) => c.stop()))
    const reason = kafka.status === 'rejected' ? kafka.reason : (registry as PromiseRejectedResult).reason
    throw new Error(
      `starting the Docker stack (${KAFKA_IMAGE}, ${REGISTRY_IMAGE}) failed: ${String(reason)}`,
      {
        cause: reason,
      },
    )
  }
  const k = kafka.value
  const r = registry.value
  const stack = {
    brokers: [`${k.getHost()}:${k.getMappedPort(9093)}`],
    registryUrl: `http://${r.getHost()}:${r.getMappedPort(8080)}/apis/ccompat/v7`,
  }
  log(`docker stack up: broker ${stack.brokers[0]}, registry ${stack.registryUrl}`)
  let stopped: Promise<void> | undefined
  return {
    ...stack,
    stop: () => (stopped ??= Promise.all([r.stop(), k.stop()]).then(() => {})),
  }
}

/** True when testcontainers finds a working container runtime within `timeoutMs`. */
export async function dockerAnswers(timeoutMs = 5_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  try {
    const { getContainerRuntimeClient } = await import('testcontainers')
    await Promise.race([
      getContainerRuntimeClient(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs)
      }),
    ])
    return true
  } catch {
    // "Could not find a working container runtime strategy", or no answer in time.
    return false
  } finally {
    clearTimeout(timer)
  }
}
