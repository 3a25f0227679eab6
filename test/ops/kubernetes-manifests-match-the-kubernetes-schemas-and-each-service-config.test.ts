import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Deployment } from 'kubernetes-models/apps/v1'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { ConfigMap, Service } from 'kubernetes-models/v1'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { repoRoot } from './prometheus-tools.ts'
import { KAFKA_SECURITY_VARIABLES, kafkaSecurityFromEnv, schemaRegistrySecurityFromEnv } from '@tep/kafka'
import { configProblems, DEPLOYABLES } from './service-configs.ts'

/** Read by every service through @tep/kafka (not in the services' own schemas), with the `*_FILE` variants of the passwords. */
const KAFKA_VARIABLES = new Set([...Object.keys(KAFKA_SECURITY_VARIABLES), 'KAFKA_SASL_PASSWORD_FILE', 'SCHEMA_REGISTRY_PASSWORD_FILE'])

// Kubernetes schemas: the npm package kubernetes-models (Apache-2.0), whose
// classes validate an object against the Kubernetes OpenAPI definitions they
// were generated from (Ajv). Kinds used by deploy/k8s only.
const KINDS = { 'apps/v1/Deployment': Deployment, 'v1/ConfigMap': ConfigMap, 'v1/Service': Service, 'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy } as const

interface Manifest {
  apiVersion: string
  kind: string
  metadata: { name: string }
  data?: Record<string, string>
  spec?: { template?: { spec: { containers: Array<{ name: string; args?: string[]; env?: Array<{ name: string; value?: string }>; envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>; ports?: Array<{ name?: string; containerPort: number }>; livenessProbe?: { httpGet?: { path: string; port: string | number } }; readinessProbe?: { httpGet?: { path: string; port: string | number } } }> } } }
}

const dir = path.join(repoRoot, 'deploy/k8s')
const manifestsIn = (folder: string): Manifest[] => readdirSync(folder)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    parseAllDocuments(readFileSync(path.join(folder, f), 'utf8')).map((d) => {
      // toJS() keeps the last of two equal keys; kubectl and podman refuse such a file (a second
      // volumeMounts once hid transaction-ingest's first one).
      if (d.errors.length > 0) throw new Error(`${f}: ${d.errors.map((e) => e.message).join('; ')}`)
      return d.toJS() as Manifest
    }),
  )
  .filter((m) => m !== null)
const manifests = manifestsIn(dir)
/** The plain-text development overlay, applied after deploy/k8s (its config map replaces tep-config). */
const devOverlay = manifestsIn(path.join(dir, 'dev-plaintext'))

// Secrets are created out of band (deploy/k8s/README.md): stand-ins with the right shape.
const SECRETS: Record<string, Record<string, string>> = {
  'kafka-credentials': { KAFKA_SASL_PASSWORD: 'kafka-password', SCHEMA_REGISTRY_PASSWORD: 'registry-password' },
  'enrichment-credentials': { ENRICHMENT_CLIENT_ID: 'id', ENRICHMENT_CLIENT_SECRET: 'secret' },
  'bank-credentials': {
    BANK_CLIENT_ID: 'id',
    BANK_CLIENT_SECRET: 'secret',
    TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: Buffer.alloc(32, 8).toString('base64'),
  },
}

/** The keys deploy/k8s/README.md creates in each secret (one file per key under secrets/<dir>/). */
function documentedSecretKeys(): Record<string, string[]> {
  const readme = readFileSync(path.join(dir, 'README.md'), 'utf8')
  const keysOf = (folder: string) => [...readme.matchAll(new RegExp(`> secrets/${folder}/([A-Z_]+)`, 'g'))].map((m) => m[1]!).sort()
  return { 'kafka-credentials': keysOf('kafka'), 'enrichment-credentials': keysOf('enrichment'), 'bank-credentials': keysOf('bank') }
}

function validateKind(m: unknown): string | undefined {
  const { apiVersion, kind } = m as Manifest
  const Model = KINDS[`${apiVersion}/${kind}` as keyof typeof KINDS]
  if (!Model) return `${apiVersion} ${kind}: no schema in this test (add its kubernetes-models class)`
  try {
    new Model(m as never).validate()
    return undefined
  } catch (err) {
    return `${kind} ${(m as Manifest).metadata?.name}: ${(err as Error).message}`
  }
}

describe('deploy/k8s manifests', () => {
  it('are valid against the Kubernetes schemas, the development overlay too', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(5)
    expect(manifests.map(validateKind).filter((p) => p !== undefined)).toEqual([])
    expect(devOverlay.map(validateKind).filter((p) => p !== undefined)).toEqual([])
  })

  it('are secure by default: SASL_SSL to Kafka, https to the registry, secrets as files only, egress restricted', () => {
    const config = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'tep-config')!.data!
    expect(config.KAFKA_SECURITY_PROTOCOL).toBe('SASL_SSL')
    expect(config.SCHEMA_REGISTRY_URL).toMatch(/^https:\/\//)
    // A secret the pod reads must come as a file: no secretRef, no secretKeyRef but the (public) client ids.
    const problems: string[] = []
    for (const d of manifests.filter((m) => m.kind === 'Deployment')) {
      const c = d.spec!.template!.spec.containers[0]!
      if ((c.envFrom ?? []).some((f) => f.secretRef)) problems.push(`${d.metadata.name}: envFrom a secret`)
      for (const e of (c.env ?? []) as Array<{ name: string; valueFrom?: { secretKeyRef?: unknown } }>)
        if (e.valueFrom?.secretKeyRef && !e.name.endsWith('_CLIENT_ID')) problems.push(`${d.metadata.name}: ${e.name} from a secret as a variable`)
    }
    expect(problems).toEqual([])
    const policies = manifests.filter((m) => m.kind === 'NetworkPolicy') as unknown as Array<{ spec: { podSelector: object; policyTypes: string[]; egress?: Array<{ ports?: Array<{ port: number }> }> } }>
    const egress = policies.filter((p) => p.spec.policyTypes.includes('Egress') && Object.keys(p.spec.podSelector).length === 0)
    expect(egress.length).toBeGreaterThan(0)
    const ports = egress.flatMap((p) => (p.spec.egress ?? []).flatMap((r) => (r.ports ?? []).map((x) => x.port)))
    expect(ports.sort((a, b) => a - b)).toEqual([53, 53, 443, 8081, 9093])
  })

  it('stand in for exactly the secrets deploy/k8s/README.md creates (a key missing there is missing in the cluster)', () => {
    const stand = Object.fromEntries(Object.entries(SECRETS).map(([name, data]) => [name, Object.keys(data).sort()]))
    expect(documentedSecretKeys()).toEqual(stand)
  })

  it('run every container non-root, read-only, without privilege escalation, from a version tag', () => {
    const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version
    const problems: string[] = []
    for (const d of manifests.filter((m) => m.kind === 'Deployment')) {
      const pod = (d.spec!.template!.spec as unknown as { securityContext?: { runAsNonRoot?: boolean; runAsUser?: number }; automountServiceAccountToken?: boolean })
      if (pod.securityContext?.runAsNonRoot !== true || !(Number(pod.securityContext.runAsUser) > 0)) problems.push(`${d.metadata.name}: pod not runAsNonRoot with a numeric user`)
      if (pod.automountServiceAccountToken !== false) problems.push(`${d.metadata.name}: service account token mounted`)
      for (const c of d.spec!.template!.spec.containers as unknown as Array<{ name: string; image: string; securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } } }>) {
        if (c.image !== `tep:${version}`) problems.push(`${d.metadata.name}: image ${c.image} is not tep:${version}`)
        const sc = c.securityContext
        if (sc?.allowPrivilegeEscalation !== false || sc.readOnlyRootFilesystem !== true || !sc.capabilities?.drop?.includes('ALL'))
          problems.push(`${d.metadata.name}/${c.name}: securityContext must forbid privilege escalation, make the root filesystem read-only and drop ALL capabilities`)
      }
    }
    expect(problems).toEqual([])
  })

  it('deny ingress by default, open the consent gateway to browsers, and run bank-sync reachable with its replica count', () => {
    const policies = manifests.filter((m) => m.kind === 'NetworkPolicy') as unknown as Array<{ metadata: { name: string }; spec: { podSelector: object; policyTypes: string[]; ingress?: unknown[] } }>
    expect(policies.some((p) => Object.keys(p.spec.podSelector).length === 0 && p.spec.policyTypes.includes('Ingress') && p.spec.ingress === undefined)).toBe(true)
    const bankSync = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === 'bank-sync')!
    const env = Object.fromEntries((bankSync.spec!.template!.spec.containers[0]!.env ?? []).map((e) => [e.name, e.value]))
    expect(env.CONSENT_GATEWAY_HOST).toBe('0.0.0.0')
    expect(Number(env.BANK_SYNC_REPLICAS)).toBe((bankSync.spec as { replicas?: number }).replicas)
  })

  it('would be refused with a wrong type or a missing required field', () => {
    const deployment = structuredClone(manifests.find((m) => m.kind === 'Deployment')!)
    const wrongType = { ...deployment, spec: { ...deployment.spec, replicas: 'three' } }
    expect(validateKind(wrongType)).toMatch(/replicas/)
    const noName = structuredClone(deployment)
    delete (noName.spec!.template!.spec.containers[0] as { name?: string }).name
    expect(validateKind(noName)).toMatch(/name/)
  })

  it('give each service a script and environment (config map + secrets) its configuration schema accepts, probes on METRICS_PORT', () => {
    const configMaps = new Map(manifests.filter((m) => m.kind === 'ConfigMap').map((m) => [m.metadata.name, m.data ?? {}]))
    const deployments = manifests.filter((m) => m.kind === 'Deployment')
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['bank-sync', 'invalidation-poller', 'refresher', 'transaction-ingest'])
    const problems: string[] = []
    for (const d of deployments) {
      const container = d.spec!.template!.spec.containers[0]!
      const env: Record<string, string> = {}
      for (const from of container.envFrom ?? []) {
        if (from.configMapRef) Object.assign(env, configMaps.get(from.configMapRef.name) ?? problems.push(`${d.metadata.name}: no config map ${from.configMapRef.name}`))
        if (from.secretRef) Object.assign(env, SECRETS[from.secretRef.name] ?? problems.push(`${d.metadata.name}: unknown secret ${from.secretRef.name}`))
      }
      for (const e of (container.env ?? []) as Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>) {
        if (e.value !== undefined) env[e.name] = e.value
        const ref = e.valueFrom?.secretKeyRef
        if (ref) env[e.name] = SECRETS[ref.name]?.[ref.key] ?? String(problems.push(`${d.metadata.name}: ${e.name} from unknown ${ref.name}/${ref.key}`))
      }
      // The secret files as the pod sees them: each secret volume's keys under its mount path.
      const pod = d.spec!.template!.spec as unknown as { volumes?: Array<{ name: string; secret?: { secretName: string } }> }
      const mounts = (container as unknown as { volumeMounts?: Array<{ name: string; mountPath: string }> }).volumeMounts ?? []
      const files = new Map<string, string>()
      for (const v of pod.volumes ?? []) {
        const mount = mounts.find((m) => m.name === v.name)
        if (v.secret && mount) for (const [key, value] of Object.entries(SECRETS[v.secret.secretName] ?? {})) files.set(`${mount.mountPath}/${key}`, value)
      }
      const readFile = (file: string) => {
        const text = files.get(file)
        if (text === undefined) throw Object.assign(new Error(`${file} is not mounted`), { code: 'ENOENT' })
        return text
      }
      // The config map is shared by every service: a key only some services read is fine there.
      problems.push(...configProblems(d.metadata.name, container.args?.[0], env, { unknownVariablesAllowed: true, readFile }))
      try {
        const kafka = kafkaSecurityFromEnv(env, readFile)
        if (kafka.sasl?.password !== 'kafka-password') problems.push(`${d.metadata.name}: the Kafka SASL password is not read from its secret file`)
        if (schemaRegistrySecurityFromEnv(env, readFile).auth?.password !== 'registry-password') problems.push(`${d.metadata.name}: the registry password is not read from its secret file`)
      } catch (err) {
        problems.push(`${d.metadata.name}: ${(err as Error).message}`)
      }
      const port = container.ports?.find((p) => p.name === 'metrics')?.containerPort
      if (String(port) !== (env.METRICS_PORT ?? '9464')) problems.push(`${d.metadata.name}: metrics containerPort ${port} is not METRICS_PORT ${env.METRICS_PORT}`)
      if (container.readinessProbe?.httpGet?.path !== '/readyz') problems.push(`${d.metadata.name}: readiness probe is not /readyz`)
      if (container.livenessProbe?.httpGet?.path !== '/healthz') problems.push(`${d.metadata.name}: liveness probe is not /healthz`)
    }
    // Every key of the shared config map is read by at least one deployable.
    for (const [name, data] of configMaps)
      for (const key of Object.keys(data)) if (!Object.values(DEPLOYABLES).some((s) => key in s.env) && !KAFKA_VARIABLES.has(key)) problems.push(`config map ${name}: ${key} is read by no service`)
    expect(problems).toEqual([])
  })
})
