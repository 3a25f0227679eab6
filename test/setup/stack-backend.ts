/** What the integration suite runs against; see test/setup/global-setup.ts. */
export type StackBackend = 'docker' | 'local' | 'external'

export interface TestStack {
  brokers: string[]
  /** Confluent-compatible registry base URL (for Apicurio: `.../apis/ccompat/v7`). */
  registryUrl: string
  /** Stops whatever this backend started; idempotent. */
  stop(): Promise<void>
}

export interface BackendChoice {
  backend: StackBackend
  reason: string
}

const BACKENDS: readonly StackBackend[] = ['docker', 'local', 'external']

/**
 * KAFKA_STACK wins; otherwise an external stack when both KAFKA_BROKERS and
 * SCHEMA_REGISTRY_URL are set, else Docker when an engine answers, else local
 * processes. The Docker probe is injected so that it runs only when needed.
 */
export async function chooseBackend(
  env: NodeJS.ProcessEnv,
  dockerAnswers: () => Promise<boolean>,
): Promise<BackendChoice> {
  const forced = env.KAFKA_STACK?.trim()
  const hasExternal = Boolean(env.KAFKA_BROKERS?.trim() && env.SCHEMA_REGISTRY_URL?.trim())
  if (forced) {
    if (!BACKENDS.includes(forced as StackBackend)) {
      throw new Error(`KAFKA_STACK must be one of ${BACKENDS.join(', ')}, got "${forced}"`)
    }
    if (forced === 'external' && !hasExternal) {
      throw new Error(
        'KAFKA_STACK=external needs KAFKA_BROKERS and SCHEMA_REGISTRY_URL (npm run stack:up prints both)',
      )
    }
    return { backend: forced as StackBackend, reason: 'KAFKA_STACK' }
  }
  if (hasExternal) return { backend: 'external', reason: 'KAFKA_BROKERS and SCHEMA_REGISTRY_URL are set' }
  if (await dockerAnswers()) return { backend: 'docker', reason: 'a Docker engine answered' }
  return { backend: 'local', reason: 'no Docker engine answered' }
}

/** The external stack: whatever KAFKA_BROKERS and SCHEMA_REGISTRY_URL name; nothing to stop. */
export function externalStack(env: NodeJS.ProcessEnv): TestStack {
  const brokers = (env.KAFKA_BROKERS ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean)
  const registryUrl = (env.SCHEMA_REGISTRY_URL ?? '').trim().replace(/\/+$/, '')
  if (brokers.length === 0 || !/^https?:\/\//.test(registryUrl)) {
    throw new Error(
      `KAFKA_BROKERS must be host:port[,host:port...] and SCHEMA_REGISTRY_URL an http(s) URL; ` +
        `got KAFKA_BROKERS="${env.KAFKA_BROKERS ?? ''}", SCHEMA_REGISTRY_URL="${env.SCHEMA_REGISTRY_URL ?? ''}"`,
    )
  }
  return { brokers, registryUrl, stop: async () => {} }
}
