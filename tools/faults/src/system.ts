import { randomBytes } from 'node:crypto'
import { cpSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { mintCustomerToken } from '@tep/bank-sync'
import { distinctPortPicker, kafkaNodesOf, readRecord, restartStackProcess, startStack, type RunningStack } from '@tep/local-stack'
import { createKafka, ensureTopics, TOPIC_CATALOG, type Kafka } from '@tep/kafka'
import { refresherMallocEnv } from '@tep/refresher'
import { ClusterProbe } from './cluster-probe.ts'
import type { ClusterNetwork } from './network/cluster-network.ts'
import { forwardLoopback } from './network/loopback-forward.ts'
import { grantConsent } from './consent-grant.ts'
import { SupervisedProcess } from './supervised-process.ts'
import { Traffic } from './traffic.ts'

export const SERVICES = ['transaction-ingest', 'refresher', 'invalidation-poller', 'bank-sync'] as const
export type ServiceName = (typeof SERVICES)[number]

/** Every secret value the run hands out, so the log scan can look for the real thing. */
export interface RunSecrets {
  enrichmentClientSecret: string
  bankClientSecret: string
  tokenEncryptionKey: string
  /** HMAC key of the customer tokens the run signs as the bank application would. */
  customerTokenKey: string
  /** Filled as the run goes: authorization codes it saw, tokens it could read. */
  observed: Set<string>
}

/**
 * The whole system on this machine: a private broker and registry, both
 * simulators and the four services, each as its own process with its log in
 * `<runDir>/logs`, with the hooks the scenarios need to hurt them.
 */
export class FaultSystem {
  stack!: RunningStack
  kafka!: Kafka
  enrichmentUrl = ''
  bankUrl = ''
  gatewayUrl = ''
  readonly processes = new Map<string, SupervisedProcess>()
  traffic!: Traffic
  /** Gateway consent ids of the sample consents granted last. */
  consentIds: string[] = []
  /** Customer of every consent the run started (reads of a consent need its customer's token). */
  readonly customerOf = new Map<string, string>()
  private consentRound = 0
  /**
   * Bank days the simulator's clock moved since the sample consents were granted. An
   * accounts consent lasts 90 days, and the rows move the bank's clock a day every 10 s:
   * a run whose rows add up to 15 minutes would see its consents expire by time.
   */
  bankDaysSinceConsent = 0
  readonly secrets: RunSecrets = {
    enrichmentClientSecret: `enr-secret-${randomBytes(12).toString('hex')}`,
    bankClientSecret: `bank-secret-${randomBytes(12).toString('hex')}`,
    tokenEncryptionKey: randomBytes(32).toString('base64'),
    customerTokenKey: randomBytes(32).toString('base64'),
    observed: new Set(),
  }
  readonly logDir: string
  private readonly runDir: string
  private readonly repoRoot: string
  private readonly say: (line: string) => void
  /** Kafka nodes of the private stack: 1, or a three-broker cluster (replication 3, min ISR 2). */
  readonly brokerCount: number
  probe!: ClusterProbe
  /** Environment of every service process, kept for the instances scale-out adds. */
  private serviceEnv: Record<string, NodeJS.ProcessEnv> = {}
  private pickPort!: (preferred?: number) => Promise<number>

  /**
   * Every Kafka node and the namespaced services (`kafka-<n>`, `transaction-ingest`,
   * `refresher`, `invalidation-poller`) on their own address, when the run has the
   * cluster network (network/cluster-network.ts); undefined: everything on 127.0.0.1.
   */
  readonly network: ClusterNetwork | undefined

  constructor(options: { repoRoot: string; runDir: string; say: (line: string) => void; brokers?: number; network?: ClusterNetwork }) {
    this.network = options.network
    this.repoRoot = options.repoRoot
    this.runDir = options.runDir
    this.logDir = path.join(options.runDir, 'logs')
    this.say = options.say
    this.brokerCount = options.brokers ?? 1
  }

  service(name: string): SupervisedProcess {
    const p = this.processes.get(name)
    if (!p) throw new Error(`no process ${name}`)
    return p
  }

  async start(): Promise<void> {
    mkdirSync(this.logDir, { recursive: true })
    const network = this.network
    this.stack = await startStack({
      stateDir: path.join(this.runDir, 'stack'),
      cacheDir: path.join(this.repoRoot, '.cache'),
      brokers: this.brokerCount,
      // Five minutes rather than the stack's two: three JVMs and the registry starting at once on a
      // shared 2-core machine under load missed two minutes (2026-11-28, load average 36-57).
      startTimeoutMs: 300_000,
      // Each node in its own namespace; the registry on every interface, so the namespaced services reach it through the bridge.
      ...(network === undefined
        ? {}
        : {
            nodePlacement: Array.from({ length: this.brokerCount }, (_, i) => {
              const host = network.host(`kafka-${i + 1}`)
              return { host: host.address, commandPrefix: host.commandPrefix }
            }),
            registryHost: '0.0.0.0',
          }),
    })
    this.say(`stack: Kafka ${this.stack.brokers.join(',')} (replication factor ${this.stack.replication.replicationFactor}, min ISR ${this.stack.replication.minInsyncReplicas}), registry ${this.stack.registryUrl}`)
    this.probe = new ClusterProbe(this.stack.brokers)
    this.kafka = createKafka({ brokers: this.stack.brokers, clientId: 'tep-faults' })
    await ensureTopics(this.kafka, TOPIC_CATALOG)

    const base: NodeJS.ProcessEnv = { ...process.env, KAFKA_BROKERS: this.stack.brokers.join(','), SCHEMA_REGISTRY_URL: this.stack.registryUrl, LOG_LEVEL: 'info' }
    const clientId = 'tep-faults-client'
    // Every server's port is picked before the later ones listen: no port twice.
    const freePort = distinctPortPicker()
    this.pickPort = freePort
    const enrichmentPort = await freePort()
    this.enrichmentUrl = `http://127.0.0.1:${enrichmentPort}`
    // With the cluster network the simulators listen on every interface: the namespaced services reach them at the bridge's address.
    const simHost = network === undefined ? [] : ['--host', '0.0.0.0']

    const gatewayPort = await freePort()
    this.gatewayUrl = `http://127.0.0.1:${gatewayPort}`
    const redirectUri = `${this.gatewayUrl}/consents/callback`
    const bankPort = await freePort()
    this.bankUrl = `http://127.0.0.1:${bankPort}`
    const bankClientId = 'tep-faults-bank-client'
    // The simulators depend on nothing but the stack, and the services on nothing but the simulators
    // and the stack: each group starts at once (each process still waits for its own health check).
    await Promise.all([
      this.add('enrichment-sim', 'simulators/enrichment-sim/src/main.ts', ['--port', String(enrichmentPort), '--mutations', '30', ...simHost], { ...base, SIM_CLIENT_ID: clientId, SIM_CLIENT_SECRET: this.secrets.enrichmentClientSecret }, `${this.enrichmentUrl}/__admin/stats`),
      this.add('bank-sim', 'simulators/bank-sim/src/main.ts', ['--port', String(bankPort), ...simHost], { ...base, SIM_BANK_REDIRECT_URI: redirectUri, SIM_BANK_CLIENT_ID: bankClientId, SIM_BANK_CLIENT_SECRET: this.secrets.bankClientSecret }, `${this.bankUrl}/__admin/stats`),
    ])

    // A namespaced service reaches the enrichment simulator and the registry at the same loopback URLs as
    // one on the host: its namespace forwards those ports to the bridge's address (loopback-forward.ts).
    if (network !== undefined)
      for (const party of ['refresher', 'invalidation-poller', 'transaction-ingest'])
        forwardLoopback(network.host(party), [enrichmentPort, this.stack.ports.registry], network.rootAddress)
    const enrichmentEnv = { ENRICHMENT_API_URL: this.enrichmentUrl, ENRICHMENT_CLIENT_ID: clientId, ENRICHMENT_CLIENT_SECRET: this.secrets.enrichmentClientSecret }
    const metrics = async () => String(await freePort())
    const [refresherPort, pollerPort, ingestPort, bankSyncPort] = [await metrics(), await metrics(), await metrics(), await metrics()]
    // A shorter session than the default 30 s: a killed instance's partitions move on sooner.
    // A stable instance id, as a pod keeps its name across container restarts: the restarted
    // ingest's transactional producer aborts its predecessor's open transaction at once.
    this.serviceEnv['transaction-ingest'] = { ...base, ...enrichmentEnv, INGEST_SESSION_TIMEOUT: '10s' }
    this.serviceEnv['bank-sync'] = {
      ...base,
      BANK_API_URL: this.bankUrl,
      BANK_CLIENT_ID: bankClientId,
      BANK_CLIENT_SECRET: this.secrets.bankClientSecret,
      BANK_REDIRECT_URI: redirectUri,
      TOKEN_ENCRYPTION_KEY: this.secrets.tokenEncryptionKey,
      CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: this.secrets.customerTokenKey,
      SYNC_INTERVAL: '5s',
      SYNC_JITTER: '1s',
    }
    // Registered (this.processes) in this order whatever order they come up in: stop() goes in reverse.
    await Promise.all([
      // Started as deployed: glibc's mmap threshold of services/refresher/src/runtime.ts (issue 35).
      this.add('refresher', 'services/refresher/src/main.ts', [], { ...base, ...refresherMallocEnv(process.env), ...enrichmentEnv, METRICS_PORT: refresherPort }, `http://${this.addressOf('refresher')}:${refresherPort}/healthz`, 'refresher'),
      this.add('invalidation-poller', 'services/invalidation-poller/src/main.ts', [], { ...base, ...enrichmentEnv, METRICS_PORT: pollerPort, INVALIDATIONS_POLL_INTERVAL: '2s' }, `http://${this.addressOf('invalidation-poller')}:${pollerPort}/healthz`, 'invalidation-poller'),
      // INGEST_STATE_DIR: a restart after a kill reads the table checkpoint instead of the whole topics (one directory per instance).
      this.add('transaction-ingest', 'services/transaction-ingest/src/main.ts', [], { ...this.serviceEnv['transaction-ingest'], METRICS_PORT: ingestPort, INGEST_INSTANCE_ID: 'transaction-ingest-0', INGEST_STATE_DIR: path.join(this.runDir, 'ingest-state') }, `http://${this.addressOf('transaction-ingest')}:${ingestPort}/healthz`, 'transaction-ingest'),
      this.add(
        'bank-sync',
        'services/bank-sync/src/main.ts',
        [],
        {
          ...this.serviceEnv['bank-sync'],
          METRICS_PORT: bankSyncPort,
          CONSENT_GATEWAY_PORT: String(gatewayPort),
          // Static membership, as the k8s manifest sets it from the pod name: a killed and
          // restarted bank-sync gets its partitions back without waiting out its session.
          BANK_SYNC_INSTANCE_ID: 'bank-sync-0',
        },
        `${this.gatewayUrl}/healthz`,
      ),
    ])
    this.traffic = new Traffic(this.kafka, this.stack.registryUrl, Date.now().toString(36))
    await this.traffic.connect()
    await this.grantSampleConsents()
  }

  /** Moves the bank simulator's clock by whole days; each counts against the sample consents' 90. */
  async advanceBankClock(days = 1): Promise<void> {
    const res = await fetch(`${this.bankUrl}/__admin/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance: `${days}d` }) })
    if (!res.ok) throw new Error(`bank clock advance ${days}d: ${res.status} ${await res.text()}`)
    this.bankDaysSinceConsent += days
  }

  /**
   * One bank day of a long run: the clock moves, and once the sample consents are
   * `refreshAfterDays` old, fresh ones are granted. A grant that fails (the bank or
   * bank-sync hurt at that moment) is said and tried again the next day, well before
   * day 90, when time alone would end the consents.
   */
  async advanceBankDay(refreshAfterDays?: number): Promise<void> {
    await this.advanceBankClock(1)
    if (refreshAfterDays === undefined || this.bankDaysSinceConsent < refreshAfterDays) return
    try {
      await this.grantSampleConsents()
    } catch (err) {
      this.say(`  fresh sample consents could not be granted (${(err as Error).message}); trying again next bank day (day ${this.bankDaysSinceConsent} of 90)`)
    }
  }

  /** Two bank customers give consent through the gateway; their accounts' transactions flow into enrichment. */
  async grantSampleConsents(): Promise<void> {
    const round = this.consentRound++
    this.bankDaysSinceConsent = 0
    this.consentIds = []
    for (const username of ['user1', 'user2'])
      this.consentIds.push((await grantConsent(this, username, `faults-${username}-${round}`)).consentId)
    this.say(`bank consents granted: ${this.consentIds.join(', ')}`)
  }

  /**
   * Another instance of a scaled service (scale-out rows): `transaction-ingest-<n>`
   * with its own instance id (own transactional id, dynamic group member), or
   * `bank-sync-<n>` with its own gateway port and static member id.
   */
  async addInstance(service: 'transaction-ingest' | 'bank-sync', n: number): Promise<string> {
    const env = this.serviceEnv[service]
    if (env === undefined) throw new Error(`${service} is not running`)
    const name = `${service}-${n}`
    const metricsPort = String(await this.pickPort())
    if (service === 'transaction-ingest') {
      // Scale-out instances share the first one's namespace: a partition of "the ingest" cuts them all.
      await this.add(name, 'services/transaction-ingest/src/main.ts', [], { ...env, METRICS_PORT: metricsPort, INGEST_INSTANCE_ID: name, INGEST_STATE_DIR: path.join(this.runDir, `ingest-state-${n}`) }, `http://${this.addressOf('transaction-ingest')}:${metricsPort}/healthz`, 'transaction-ingest')
    } else {
      const gatewayPort = await this.pickPort()
      await this.add(name, 'services/bank-sync/src/main.ts', [], { ...env, METRICS_PORT: metricsPort, CONSENT_GATEWAY_PORT: String(gatewayPort), BANK_SYNC_INSTANCE_ID: name }, `http://127.0.0.1:${gatewayPort}/healthz`)
    }
    return name
  }

  /** Stops an instance scale-out added (SIGTERM: a clean scale-in) and forgets it. */
  async removeInstance(name: string): Promise<void> {
    await this.service(name).stop()
    this.processes.delete(name)
  }

  /** The current pid of Kafka node `nodeId` (restarts change it). */
  async brokerPid(nodeId: number): Promise<number> {
    const record = await readRecord(this.stack.stateDir)
    const node = record === undefined ? undefined : kafkaNodesOf(record).find((n) => n.nodeId === nodeId)
    if (node === undefined) throw new Error(`no Kafka node ${nodeId} in ${this.stack.stateDir}`)
    return node.pid
  }

  /** Kafka node `nodeId` killed (SIGKILL) or stopped cleanly (SIGTERM), down for `downMs`, started again on its data. */
  async restartBrokerNode(nodeId: number, signal: 'SIGKILL' | 'SIGTERM', downMs = 0): Promise<number> {
    // Five minutes for the restarted node to answer, as for the start: 120 s was missed under load.
    const report = await restartStackProcess(this.stack.stateDir, 'kafka', { signal, nodeId, downMs, startTimeoutMs: 300_000 })
    return report.outageMs
  }

  /** Kafka node `nodeId` frozen (SIGSTOP) for `ms`, then continued: a stalled broker that comes back as a zombie. */
  async pauseBroker(nodeId: number, ms: number): Promise<void> {
    const pid = await this.brokerPid(nodeId)
    process.kill(pid, 'SIGSTOP')
    try {
      await new Promise((r) => setTimeout(r, ms))
    } finally {
      process.kill(pid, 'SIGCONT')
    }
  }

  /** Where a service listens as seen from here: its namespace's address, or loopback without the cluster network. */
  addressOf(party: string): string {
    return this.network?.has(party) ? this.network.host(party).address : '127.0.0.1'
  }

  /** A service's /metrics as text (the one METRICS_PORT of its health URL). */
  async metricsText(name: string): Promise<string> {
    const url = this.service(name).spec.healthUrl.replace(/\/healthz$/, '/metrics')
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) })
    return res.text()
  }

  /** `party`: the namespace it runs in (network/cluster-network.ts), when the run has one. */
  private async add(name: string, script: string, args: string[], env: NodeJS.ProcessEnv, healthUrl: string, party?: string): Promise<void> {
    const commandPrefix = party !== undefined && this.network?.has(party) ? this.network.host(party).commandPrefix : undefined
    const p = new SupervisedProcess({ name, script: path.join(this.repoRoot, script), args, env, cwd: this.repoRoot, logFile: path.join(this.logDir, `${name}.log`), healthUrl, ...(commandPrefix === undefined ? {} : { commandPrefix }) })
    this.processes.set(name, p)
    await p.start()
    this.say(`${name} started`)
  }

  /** Sample consents no longer ACTIVE (or EXPIRING), as `<id> <status>`. */
  async endedConsents(): Promise<string[]> {
    const out: string[] = []
    for (const id of this.consentIds) {
      const status = await this.consentStatus(id).catch(() => 'unreachable')
      if (status !== 'ACTIVE' && status !== 'EXPIRING') out.push(`${id} ${status}`)
    }
    return out
  }

  /** A consent's status as its customer reads it from the gateway (with the customer token, as the bank application would). */
  async consentStatus(id: string): Promise<string | undefined> {
    const customerId = this.customerOf.get(id)
    if (customerId === undefined) throw new Error(`consent ${id} was not started by this run`)
    const token = await mintCustomerToken(Buffer.from(this.secrets.customerTokenKey, 'base64'), customerId)
    const res = await fetch(`${this.gatewayUrl}/consents/${id}`, { headers: { accept: 'application/json', authorization: `Bearer ${token}` } })
    const body = (await res.json().catch(() => ({}))) as { status?: string }
    return res.ok ? body.status : `HTTP ${res.status}`
  }

  /** The broker killed (SIGKILL) or stopped cleanly (SIGTERM), and started again on the same data. */
  async restartBroker(signal: 'SIGKILL' | 'SIGTERM'): Promise<number> {
    const report = await restartStackProcess(this.stack.stateDir, 'kafka', { signal })
    return report.outageMs
  }

  /** The registry process frozen (SIGSTOP) for `ms`: it neither answers nor refuses, like a hung server. */
  async stopRegistry(ms: number): Promise<void> {
    const pid = this.stack.pids.registry
    process.kill(pid, 'SIGSTOP')
    try {
      await new Promise((r) => setTimeout(r, ms))
    } finally {
      process.kill(pid, 'SIGCONT')
    }
  }

  async stop(): Promise<void> {
    // For a post-mortem with kafka.tools.DumpLogSegments: the broker data outlives the run.
    if (process.env.FAULTS_KEEP_DATA === 'true' && this.stack !== undefined)
      cpSync(this.stack.stateDir, path.join(this.runDir, 'stack-data'), { recursive: true })
    await this.traffic?.close()
    for (const p of [...this.processes.values()].reverse()) await p.stop().catch(() => {})
    // Killed, not stopped: the run's broker data is removed with the stack (FAULTS_KEEP_DATA copied it above),
    // and a controlled shutdown of three nodes at once took 6-13 s of every cluster run.
    await this.stack?.stop({ kill: true }).catch(() => {})
    this.network?.teardown()
  }
}
