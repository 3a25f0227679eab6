import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[]
    registryUrl: string
  }
}

// Minimal first version: external stack only (KAFKA_BROKERS, SCHEMA_REGISTRY_URL).
// The local-process and testcontainers backends are added with deploy/local.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const brokers = process.env.KAFKA_BROKERS
  const registry = process.env.SCHEMA_REGISTRY_URL
  if (!brokers || !registry) {
    throw new Error('integration tests need KAFKA_BROKERS and SCHEMA_REGISTRY_URL (npm run stack:up prints them)')
  }
  project.provide('kafkaBrokers', brokers.split(','))
  project.provide('registryUrl', registry)
  return async () => {}
}
