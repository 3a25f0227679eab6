import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { freePort } from '@tep/local-stack'
import { startBankSim, type BankSim } from '@tep/bank-sim'
import { createBankClient, type BankClient, type Transaction } from '@tep/bank-client'
import {
  mintCustomerToken,
  startBankSync,
  type BankSync,
  type BankSyncOptions,
  type SyncOutcome,
} from '@tep/bank-sync'
import { AvroSerde, createKafka, createSchemaRegistry, type Kafka, type TopicCodec } from '@tep/kafka'
import type { BankTransaction, Consent, RawTransaction } from '@tep/schemas'
import { createKeyring } from '@tep/token-cipher'
import { createKafkaTestKit, uniqueName, type KafkaTestKit } from '../../support/kafka-test-kit.ts'
import { readTopic } from '../../support/read-topic.ts'
import { waitFor } from '../../support/wait-for.ts'

/** The bank's time is frozen here and moves only through the simulator clock. */
export const SIM_START = Date.parse('2026-05-04T08:00:00Z')
const CLIENT_ID = 'tep-sim-client'
const CLIENT_SECRET = 'tep-sim-secret'

export interface SyncRecord {
  consentId: string
  outcome: SyncOutcome
}

export interface Instance {
  sync: BankSync
  /** Every finished sync of this instance, in order. */
  syncs: SyncRecord[]
}

export interface Harness {
  sim: BankSim
  kit: KafkaTestKit
  kafka: Kafka
  schemaRegistry: ReturnType<typeof createSchemaRegistry>
  serde: AvroSerde
  topics: { consents: string; bankTransactions: string; raw: string }
  codecs: {
    consent: TopicCodec<Consent>
    bankTransaction: TopicCodec<BankTransaction>
    raw: TopicCodec<RawTransaction>
  }
  /** The redirect URI registered at the bank: the gateway's callback (on a port chosen up front). */
  redirectUri: string
  gatewayPort: number
  /** The key the "bank application" signs customer tokens with (shared with the gateway). */
  customerTokenKey: Buffer
  /** A fresh customer token for `customerId`, as the bank application would mint it. */
  customerToken(customerId: string): Promise<string>
  /**
   * POST /consents as the bank application does for its logged-in customer: the
   * token in Authorization; returns the answer and the binding cookie it set.
   */
  startConsent(
    gatewayUrl: string,
    customerId: string,
  ): Promise<{ consentId: string; authorizationUrl: string; state: string; codeChallenge: string | null; cookie: string }>
  startInstance(
    overrides?: Partial<BankSyncOptions> & { gateway?: BankSyncOptions['gateway'] },
  ): Promise<Instance>
  admin<T = Record<string, unknown>>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T>
  accountsOf(username: string): Promise<Array<{ id: string; iban: string; currency: string; kind: string }>>
  /**
   * The customer's path: POST /consents on the gateway, the bank's grant (admin
   * shortcut for the login and consent pages, with the gateway's state), then the
   * browser following the bank's redirect to the gateway callback.
   */
  grantThroughGateway(
    gatewayUrl: string,
    customerId: string,
    username: string,
    accountIds?: string[],
  ): Promise<{ consentId: string; bankConsentId: string; callback: Response }>
  /** What the bank shows for an account from `dateFrom`, read through a separate consent (the test oracle). */
  bankHistory(username: string, accountId: string, dateFrom: string): Promise<Transaction[]>
  /** Every committed record of a topic (read committed), decoded. */
  readAll<T>(topic: string, codec: TopicCodec<T>): Promise<Array<{ key: string; value: T }>>
  /**
   * readAll until `done` holds. A transaction's commit returns before the broker has
   * written its markers to every partition, so a read right after a sync may not see
   * all of it yet; an exact assertion follows once the expected amount is visible.
   */
  readUntil<T>(
    topic: string,
    codec: TopicCodec<T>,
    what: string,
    done: (records: Array<{ key: string; value: T }>) => boolean,
    timeoutMs?: number,
  ): Promise<Array<{ key: string; value: T }>>
  advanceClock(advance: string): Promise<void>
  waitForSync(
    instance: Instance,
    consentId: string,
    after: number,
    kind?: SyncOutcome['kind'],
  ): Promise<SyncOutcome>
  close(): Promise<void>
}

/** The enrichment simulator's data set the bank simulator's card payments and merchant transfers point at. */
export const SIM_DATA = { seed: 1, shops: 3_000, merchants: 300 }

export async function startHarness(
  options: { partitions?: number; realClock?: boolean; contractDrift?: string } = {},
): Promise<Harness> {
  const kit = createKafkaTestKit()
  const kafka = createKafka({
    brokers: inject('kafkaBrokers'),
    clientId: uniqueName('bank-sync-test'),
    logLevel: 'error',
  })
  const topics = {
    consents: uniqueName('bank.consents'),
    bankTransactions: uniqueName('bank.transactions'),
    raw: uniqueName('transactions.raw'),
  }
  const partitions = options.partitions ?? 3
  await kit.createTopics([topics.consents], partitions, { 'cleanup.policy': 'compact' })
  await kit.createTopics([topics.bankTransactions, topics.raw], partitions)
  const schemaRegistry = createSchemaRegistry({ url: inject('registryUrl') })
  const serde = new AvroSerde({ registry: schemaRegistry })
  const codecs = {
    consent: serde.topic(topics.consents, 'Consent'),
    bankTransaction: serde.topic(topics.bankTransactions, 'BankTransaction'),
    raw: serde.topic(topics.raw, 'RawTransaction'),
  }
  const gatewayPort = await freePort()
  const redirectUri = `http://127.0.0.1:${gatewayPort}/consents/callback`
  const sim = await startBankSim({
    // A frozen bank clock unless a test runs bank-sync as a separate process (which uses real time).
    ...(options.realClock ? {} : { wallClock: () => SIM_START }),
    clients: 3,
    historyDays: 120,
    ...(options.contractDrift === undefined ? {} : { contractDrift: options.contractDrift }),
    merchantData: SIM_DATA,
    registeredClients: [
      {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [redirectUri],
        name: 'bank-sync tests',
      },
    ],
  })
  const oracleClients: BankClient[] = []
  const instances: BankSync[] = []
  const groupId = uniqueName('bank-sync')
  const transactionalIdPrefix = uniqueName('bank-sync-tx')
  const keyring = createKeyring([{ id: 'test', key: randomBytes(32) }])
  const customerTokenKey = randomBytes(32)
  const customerToken = (customerId: string) =>
    mintCustomerToken(customerTokenKey, customerId, { now: Date.now() })

  async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`bank-sim admin ${method} ${path} answered ${res.status}: ${text}`)
    return JSON.parse(text) as T
  }

  const h: Harness = {
    sim,
    kit,
    kafka,
    schemaRegistry,
    serde,
    topics,
    codecs,
    redirectUri,
    gatewayPort,
    customerTokenKey,
    customerToken,
    async startConsent(gatewayUrl, customerId) {
      const started = await fetch(`${gatewayUrl}/consents`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await customerToken(customerId)}`,
        },
        body: JSON.stringify({}),
      })
      if (started.status !== 201)
        throw new Error(`POST /consents answered ${started.status}: ${await started.text()}`)
      const { consentId, authorizationUrl } = (await started.json()) as {
        consentId: string
        authorizationUrl: string
      }
      const params = new URL(authorizationUrl).searchParams
      const state = params.get('state')
      if (state === null) throw new Error(`authorization URL without state: ${authorizationUrl}`)
      // What a browser would send back: name=value of the Set-Cookie.
      const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
      return { consentId, authorizationUrl, state, codeChallenge: params.get('code_challenge'), cookie }
    },
    async startInstance(overrides = {}) {
      const syncs: SyncRecord[] = []
      const { hooks, ...rest } = overrides
      const sync = await startBankSync({
        kafka,
        serde,
        bank: { baseUrl: sim.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri },
        keyring,
        topics,
        groupId,
        transactionalIdPrefix,
        gateway: { port: gatewayPort, host: '127.0.0.1', customerTokenKey },
        schedule: { intervalMs: 250, jitterMs: 50, concurrency: 4, maxBackoffMs: 2_000 },
        sync: { backfillDays: 30 },
        now: () => sim.clock.now(),
        consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
        ...rest,
        hooks: {
          ...hooks,
          onSynced: (consentId, outcome) => {
            syncs.push({ consentId, outcome })
            hooks?.onSynced?.(consentId, outcome)
          },
        },
      })
      instances.push(sync)
      await waitFor('the bank-sync instance to own and rebuild its consents partitions', async () => {
        if (sync.ownedPartitions().length === 0) return false
        await sync.whenCaughtUp()
        return true
      })
      return { sync, syncs }
    },
    admin,
    async accountsOf(username) {
      const { users } = await admin<{
        users: Array<{
          username: string
          accounts: Array<{ id: string; iban: string; currency: string; kind: string }>
        }>
      }>('GET', '/__admin/clients')
      const user = users.find((u) => u.username === username)
      if (!user) throw new Error(`bank-sim has no test client ${username}`)
      return user.accounts
    },
    async grantThroughGateway(gatewayUrl, customerId, username, accountIds) {
      const { consentId, state, codeChallenge, cookie } = await h.startConsent(gatewayUrl, customerId)
      const granted = await admin<{ redirectUrl: string; consentId: string }>('POST', '/__admin/consents', {
        username,
        scope: 'AISP',
        state,
        ...(codeChallenge === null ? {} : { codeChallenge }),
        ...(accountIds ? { accountIds } : {}),
      })
      const callback = await fetch(granted.redirectUrl, {
        headers: { accept: 'application/json', cookie },
      })
      return { consentId, bankConsentId: granted.consentId, callback }
    },
    async bankHistory(username, accountId, dateFrom) {
      const client = createBankClient({
        baseUrl: sim.url,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUri,
        tppName: 'bank-sync test oracle',
        now: () => new Date(sim.clock.now()),
      })
      oracleClients.push(client)
      const { code } = await admin<{ code: string }>('POST', '/__admin/consents', {
        username,
        scope: 'AISP',
        accountIds: [accountId],
      })
      const tokens = await client.authorization.exchangeCode(code, { scope: 'AISP' })
      const items: Transaction[] = []
      for await (const t of client.accounts.transactions(
        accountId,
        { dateFrom, pageSize: 100 },
        { accessToken: tokens.accessToken },
      )) {
        items.push(t)
      }
      return items
    },
    async readAll<T>(topic: string, codec: TopicCodec<T>) {
      // Read committed, to the end offsets at the call, per partition in offset order.
      const records = await readTopic(kit.kafka, topic)
      const out: Array<{ key: string; value: T; partition: number; offset: bigint }> = []
      for (const m of records)
        out.push({ key: m.key?.toString() ?? '', value: await codec.decode(m.value), partition: m.partition, offset: BigInt(m.offset) })
      return out
        .sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : 1))
        .map(({ key, value }) => ({ key, value }))
    },
    async readUntil(topic, codec, what, done, timeoutMs = 30_000) {
      let last: Array<{ key: string; value: never }> = []
      try {
        return await waitFor(
          what,
          async () => {
            last = (await h.readAll(topic, codec)) as never
            return done(last) ? last : undefined
          },
          { timeoutMs, intervalMs: 200 },
        )
      } catch (err) {
        throw new Error(`${(err as Error).message}; last read ${last.length} record(s) of ${topic}`, {
          cause: err,
        })
      }
    },
    async advanceClock(advance) {
      await admin('POST', '/__admin/clock', { advance })
    },
    async waitForSync(instance, consentId, after, kind) {
      const record = await waitFor(
        `a ${kind ?? 'finished'} sync of consent ${consentId} (after ${after} earlier syncs of this instance)`,
        () =>
          instance.syncs
            .slice(after)
            .find((s) => s.consentId === consentId && (kind === undefined || s.outcome.kind === kind)),
        { timeoutMs: 60_000 },
      )
      return record.outcome
    },
    async close() {
      await Promise.allSettled(instances.map((i) => i.stop()))
      await Promise.allSettled(oracleClients.map((c) => c.close()))
      await sim.close()
      await kit.disconnectAll()
    },
  }
  return h
}

/**
 * The environment of a bank-sync process (services/bank-sync/src/main.ts) on the
 * harness's broker, registry, simulator, gateway port and topics, with a group
 * and transactional id of its own (`name` prefixes them); `extra` adds or overrides.
 */
export function bankSyncProcessEnv(h: Harness, name: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LOG_LEVEL: 'warn',
    KAFKA_BROKERS: inject('kafkaBrokers').join(','),
    SCHEMA_REGISTRY_URL: inject('registryUrl'),
    METRICS_PORT: '0',
    BANK_API_URL: h.sim.url,
    BANK_CLIENT_ID: 'tep-sim-client',
    BANK_CLIENT_SECRET: 'tep-sim-secret',
    BANK_REDIRECT_URI: h.redirectUri,
    CONSENT_GATEWAY_PORT: String(h.gatewayPort),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // The harness mints customer tokens with its own key: the process must accept them.
    CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: h.customerTokenKey.toString('base64'),
    BANK_CONSENTS_TOPIC: h.topics.consents,
    BANK_TRANSACTIONS_TOPIC: h.topics.bankTransactions,
    BANK_RAW_TOPIC: h.topics.raw,
    BANK_SYNC_GROUP_ID: uniqueName(name),
    BANK_SYNC_TRANSACTIONAL_ID_PREFIX: uniqueName(`${name}-tx`),
    SYNC_INTERVAL: '300ms',
    SYNC_JITTER: '50ms',
    BANK_BACKFILL_DAYS: '30',
    ...extra,
  }
}
