import type { TestProject } from 'vitest/node'
import { chooseBackend, externalStack, type TestStack } from './stack-backend.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[]
    registryUrl: string
  }
}

const log = (line: string) => process.stderr.write(`[global-setup] ${line}\n`)

/**
 * Gives the integration project one broker and one registry (`inject('kafkaBrokers')`,
 * `inject('registryUrl')`). KAFKA_STACK=docker|local|external picks the backend;
 * unset: external if KAFKA_BROKERS and SCHEMA_REGISTRY_URL are set, else
 * testcontainers if a Docker engine answers, else local Kafka/Apicurio processes.
 * Vitest calls the returned teardown also when tests fail.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { backend, reason } = await chooseBackend(process.env, async () => {
    const { dockerAnswers } = await import('./stack-docker.ts')
    return dockerAnswers()
  })
  log(`backend: ${backend} (${reason}); set KAFKA_STACK=docker|local|external to choose`)

  let stack: TestStack
  if (backend === 'external') {
    stack = externalStack(process.env)
    log(`external stack: broker ${stack.brokers.join(',')}, registry ${stack.registryUrl}`)
  } else if (backend === 'docker') {
    // Imported lazily: loading testcontainers is pointless (and slow) for the other backends.
    const { startDockerStack } = await import('./stack-docker.ts')
    stack = await startDockerStack(log)
  } else {
    const { startLocalStack } = await import('./stack-local.ts')
    stack = await startLocalStack(log)
  }

  project.provide('kafkaBrokers', stack.brokers)
  project.provide('registryUrl', stack.registryUrl)
  return () => stack.stop()
}
