import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { brokerAnswers, fetchRuntime, registryAnswers, startStack } from '@tep/local-stack'

export interface PipelineStack {
  brokers: string[]
  registryUrl: string
  origin: string
  stop(): Promise<void>
}

function parseEnvFile(file: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim())
    if (m) out[m[1]!] = m[2]!
  }
  return out
}

/**
 * The broker and registry to run against, in order of preference: the ones named
 * by KAFKA_BROKERS and SCHEMA_REGISTRY_URL; a healthy `npm run stack:up` stack;
 * otherwise a private stack on free ports that lives as long as this process.
 */
export async function obtainStack(repoRoot: string, say: (line: string) => void, brokerCount = 1): Promise<PipelineStack> {
  const fromEnv = { brokers: process.env.KAFKA_BROKERS, registry: process.env.SCHEMA_REGISTRY_URL }
  if (fromEnv.brokers && fromEnv.registry) {
    return { brokers: fromEnv.brokers.split(','), registryUrl: fromEnv.registry, origin: 'KAFKA_BROKERS / SCHEMA_REGISTRY_URL', stop: async () => {} }
  }
  const envFile = path.join(repoRoot, '.local', 'stack.env')
  if (existsSync(envFile)) {
    const env = parseEnvFile(envFile)
    if (env.KAFKA_BROKERS && env.SCHEMA_REGISTRY_URL) {
      const brokers = env.KAFKA_BROKERS.split(',')
      if ((await brokerAnswers(brokers)) && (await registryAnswers(env.SCHEMA_REGISTRY_URL))) {
        return { brokers, registryUrl: env.SCHEMA_REGISTRY_URL, origin: 'npm run stack:up (.local/stack.env)', stop: async () => {} }
      }
    }
  }
  say('fetching Kafka and Apicurio if needed (first run: ~200 MB from Maven Central) ...')
  await fetchRuntime({ log: (line: string) => say(`  ${line}`) })
  say(`starting a private Kafka ${brokerCount === 1 ? 'broker' : `cluster of ${brokerCount} brokers (replication factor 3, min ISR 2)`} and schema registry ...`)
  const stack = await startStack({ stateDir: path.join(repoRoot, '.local', 'start', 'stack'), brokers: brokerCount })
  say(`  ${brokerCount === 1 ? 'broker' : 'brokers'} ready in ${(stack.timings.kafkaReadyMs / 1000).toFixed(1)} s, registry in ${(stack.timings.registryReadyMs / 1000).toFixed(1)} s`)
  return { brokers: stack.brokers, registryUrl: stack.registryUrl, origin: 'private stack (stopped on exit)', stop: () => stack.stop() }
}
