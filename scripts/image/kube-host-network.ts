/**
 * `node scripts/image/kube-host-network.ts deploy/k8s/<service>.yaml [metrics-port]`
 * prints that file's Deployments rewritten for `podman kube play --network host`
 * on one machine whose broker and registry listen on 127.0.0.1 only (the local stack):
 *
 * - `hostNetwork: true` and no container `ports` (podman refuses port mappings on
 *   the host network; a pod network could not reach 127.0.0.1 of the host);
 * - one replica (every replica would bind the same ports on the host network);
 * - probes by port number; the metrics port becomes `metrics-port` (default 9464),
 *   which the service's METRICS_PORT must then name (the config map given to
 *   `podman kube play --configmap`).
 *
 * Everything else (image, arguments, environment, security context, volumes) is
 * left as deploy/k8s has it: that is what the trial checks. Other kinds (Service,
 * NetworkPolicy) are left out; podman has no use for them here.
 */
import { readFileSync } from 'node:fs'
import { parseAllDocuments, stringify } from 'yaml'

interface Probe {
  httpGet?: { port: number | string }
}
interface Container {
  ports?: Array<{ name?: string; containerPort: number }>
  livenessProbe?: Probe
  readinessProbe?: Probe
}
interface Deployment {
  kind: string
  spec: { replicas?: number; template: { spec: { hostNetwork?: boolean; containers: Container[] } } }
}

const [file, metricsPortArg = '9464'] = process.argv.slice(2)
if (file === undefined || file === '-h' || file === '--help') {
  process.stdout.write('usage: node scripts/image/kube-host-network.ts <manifest.yaml> [metrics-port]\n')
  process.exit(file === undefined ? 2 : 0)
}
const metricsPort = Number(metricsPortArg)
if (!Number.isInteger(metricsPort) || metricsPort <= 0)
  throw new Error(`metrics-port must be a port number, got ${metricsPortArg}`)

const out: string[] = []
for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
  // A duplicate key is a broken manifest (kubectl and podman refuse it); say so instead of guessing.
  if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`)
  const manifest = doc.toJS() as Deployment | null
  if (manifest?.kind !== 'Deployment') continue
  manifest.spec.replicas = 1
  const pod = manifest.spec.template.spec
  pod.hostNetwork = true
  for (const container of pod.containers) {
    const ports = new Map((container.ports ?? []).map((p) => [p.name, p.containerPort]))
    delete container.ports
    for (const probe of [container.livenessProbe, container.readinessProbe]) {
      if (probe?.httpGet === undefined) continue
      const port = typeof probe.httpGet.port === 'string' ? ports.get(probe.httpGet.port) : probe.httpGet.port
      probe.httpGet.port = port === 9464 ? metricsPort : (port ?? probe.httpGet.port)
    }
  }
  out.push(stringify(manifest))
}
process.stdout.write(out.join('---\n'))
