import { existsSync } from 'node:fs'
import path from 'node:path'
import { ConfigError, loadConfig, resolveEnrichmentAuth, type EnvSpec } from '@tep/config'
import { bankSyncEnv, resolveBankClient, resolveCustomerTokenKey, resolveKeyring } from '@tep/bank-sync'
import { pollerEnv } from '@tep/invalidation-poller'
import { refresherEnv } from '@tep/refresher'
import { INGEST_ENV } from '@tep/transaction-ingest'
import { EXPORTER_ENV, TRAFFIC_ENV } from '../../scripts/start/standalone-env.ts'
import { repoRoot } from './prometheus-tools.ts'

/** Each deployable's main script and its configuration schema, from the packages' public entries. */
export const DEPLOYABLES: Record<string, { script: string; env: EnvSpec; crossChecks?: (cfg: Record<string, unknown>) => string | undefined }> = {
  'transaction-ingest': { script: 'services/transaction-ingest/src/main.ts', env: INGEST_ENV, crossChecks: enrichmentAuth },
  refresher: { script: 'services/refresher/src/main.ts', env: refresherEnv, crossChecks: enrichmentAuth },
  'invalidation-poller': { script: 'services/invalidation-poller/src/main.ts', env: pollerEnv, crossChecks: enrichmentAuth },
  'bank-sync': {
    script: 'services/bank-sync/src/main.ts',
    env: bankSyncEnv,
    crossChecks: (cfg) => {
      try {
        // Both keys, as main.ts resolves them: a deployment without one exits at start.
        resolveKeyring(cfg as Parameters<typeof resolveKeyring>[0])
        resolveCustomerTokenKey(cfg as Parameters<typeof resolveCustomerTokenKey>[0])
        resolveBankClient(cfg as Parameters<typeof resolveBankClient>[0])
        return undefined
      } catch (err) {
        return (err as Error).message
      }
    },
  },
  'pipeline-exporter': { script: 'scripts/start/exporter-main.ts', env: EXPORTER_ENV },
  'sample-traffic': { script: 'scripts/start/traffic-main.ts', env: TRAFFIC_ENV },
}

function enrichmentAuth(cfg: Record<string, unknown>): string | undefined {
  const auth = resolveEnrichmentAuth(cfg as Parameters<typeof resolveEnrichmentAuth>[0])
  return 'problem' in auth ? auth.problem : undefined
}

/** Variables the runtime reads that are not the service's own configuration. */
const RUNTIME_VARS = new Set(['NODE_ENV', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'TZ', 'MALLOC_MMAP_THRESHOLD_'])

/**
 * Problems of running `name` with `script` and `env`: a script that is not the
 * service's, a variable the service does not know (a typo is silently ignored at
 * run time), and whatever the service's own start-up validation would refuse.
 */
export function configProblems(
  name: string,
  script: string | undefined,
  env: Record<string, string>,
  options: { unknownVariablesAllowed?: boolean; readFile?: (path: string) => string } = {},
): string[] {
  const deployable = DEPLOYABLES[name]
  if (!deployable) return [`${name}: no configuration schema known for it`]
  const problems: string[] = []
  if (script !== deployable.script) problems.push(`${name}: runs ${script}, expected ${deployable.script}`)
  if (!existsSync(path.join(repoRoot, deployable.script))) problems.push(`${name}: ${deployable.script} does not exist`)
  if (!options.unknownVariablesAllowed)
    for (const key of Object.keys(env))
      if (!(key in deployable.env) && !RUNTIME_VARS.has(key) && !isSecretFileOf(deployable.env, key)) problems.push(`${name}: ${key} is not a variable of ${name}`)
  try {
    const cfg = loadConfig(name, deployable.env, env, options.readFile) as Record<string, unknown>
    const cross = deployable.crossChecks?.(cfg)
    if (cross) problems.push(`${name}: ${cross}`)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    problems.push(err.message)
  }
  return problems
}

/** `NAME_FILE` of a secret variable `NAME`: loadConfig reads the secret from that file. */
function isSecretFileOf(spec: EnvSpec, key: string): boolean {
  return key.endsWith('_FILE') && spec[key.slice(0, -'_FILE'.length)]?.secret === true
}
