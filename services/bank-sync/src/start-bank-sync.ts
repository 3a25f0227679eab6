import type { AddressInfo } from 'node:net'
import { createBankClient, DEFAULT_AUTHORIZATION_LIMITS, type BankClient } from '@tep/bank-client'
import { isLoopbackHost } from '@tep/config'
import {
  createRecordProducer,
  createReplayingGroupMember,
  OffsetReader,
  SILENT_LOGGER,
  TOPICS,
  type RecordProducer,
  type ReplayBatch,
} from '@tep/kafka'
import { createContractDriftRecorder, createMetricsRegistry, Readiness } from '@tep/observability'
import type { Consent } from '@tep/schemas'
import { TokenCipher } from '@tep/token-cipher'
import { AuthorizationStateSigner, deriveStateKey } from './authorization-state.ts'
import { CallbackBudget } from './callback-budget.ts'
import { buildConsentGateway } from './consent-gateway.ts'
import { CustomerTokenVerifier } from './customer-token.ts'
import { DEFAULT_SYNC_SETTINGS, type SyncSettings, type UnsavedTokens } from './sync-deps.ts'
import { ConsentView } from './consent-view.ts'
import { createBankSyncMetrics } from './metrics.ts'
import type { BankSyncCodecs, BankSyncTopics, ScheduleSettings } from './owner-options.ts'
import { PartitionOwner } from './partition-owner.ts'
import { CONSENTS_CHECK, DEFAULT_SCHEDULE, GATEWAY_CHECK, type BankSync, type BankSyncOptions, type GatewayOptions } from './bank-sync-options.ts'
import { DEFAULT_CALLBACK_BUDGET, tokenEndpointShares } from './token-endpoint-shares.ts'

/**
 * Starts one bank-sync instance in-process: the consent gateway, the consent view,
 * and the group consumer of the consents topic whose assigned partitions this
 * instance owns and syncs. Resolves once consuming and listening.
 */
export async function startBankSync(options: BankSyncOptions): Promise<BankSync> {
  const logger = options.logger ?? SILENT_LOGGER
  const now = options.now ?? Date.now
  const metricsRegistry =
    options.metricsRegistry ?? createMetricsRegistry({ service: 'bank-sync', defaultMetrics: false })
  const metrics = createBankSyncMetrics(metricsRegistry)
  const contractDrift = createContractDriftRecorder({
    registry: metricsRegistry,
    // Only its warn is used; the sync's logger is pino's in run.ts.
    logger: logger as unknown as Parameters<typeof createContractDriftRecorder>[0]['logger'],
  })
  const readiness = options.readiness ?? new Readiness()
  readiness.set(CONSENTS_CHECK, false, 'joining the consumer group')
  const topics: BankSyncTopics = {
    consents: options.topics?.consents ?? TOPICS.bankConsents,
    bankTransactions: options.topics?.bankTransactions ?? TOPICS.bankTransactions,
    raw: options.topics?.raw ?? TOPICS.transactionsRaw,
  }
  const codecs: BankSyncCodecs = {
    consent: options.serde.topic(topics.consents, 'Consent'),
    bankTransaction: options.serde.topic(topics.bankTransactions, 'BankTransaction'),
    raw: options.serde.topic(topics.raw, 'RawTransaction'),
  }
  await Promise.all([codecs.consent.register(), codecs.bankTransaction.register(), codecs.raw.register()])

  let bank = options.bankClient
  // The gateway's own client: its token calls wait on their own limiter, never in the sync's queue.
  let gatewayBank = options.bankClient
  const ownsBank = bank === undefined
  if (bank === undefined) {
    if (options.bank === undefined)
      throw new TypeError('startBankSync needs `bank` (OAuth client settings) or `bankClient`')
    const settings = {
      ...options.bank,
      tppName: options.bank.tppName ?? 'Transaction Enrichment Pipeline',
      logger,
      now: () => new Date(now()),
      onContractDrift: contractDrift.listener,
    }
    const window = DEFAULT_AUTHORIZATION_LIMITS.perInterval
    const shares = tokenEndpointShares(window!.requests, options.replicas ?? 1)
    bank = createBankClient({
      ...settings,
      authorizationLimits: {
        perInterval: { intervalMs: window!.intervalMs, requests: shares.sync },
      },
    })
    gatewayBank = createBankClient({
      ...settings,
      authorizationLimits: {
        maxConcurrent: 2,
        perInterval: { intervalMs: window!.intervalMs, requests: shares.gateway },
      },
    })
  }
  if (options.gateway !== false && options.gateway?.customerTokenKey === undefined) {
    throw new TypeError('startBankSync needs gateway.customerTokenKey (or gateway: false)')
  }
  const cipher = new TokenCipher(options.keyring)
  const settings: SyncSettings = { ...DEFAULT_SYNC_SETTINGS, ...options.sync }
  const schedule: ScheduleSettings = { ...DEFAULT_SCHEDULE, ...options.schedule }
  const groupId = options.groupId ?? 'bank-sync'
  const transactionalIdPrefix = options.transactionalIdPrefix ?? 'bank-sync'

  const owners = new Map<number, PartitionOwner>()
  // Outlives the owners (rebuilt on every rebalance, e.g. during a broker outage).
  const unsavedTokens = new Map<string, UnsavedTokens>()
  const refreshGauges = () => {
    const byStatus = new Map<string, number>()
    for (const owner of owners.values())
      for (const c of owner.consents()) byStatus.set(c.status, (byStatus.get(c.status) ?? 0) + 1)
    for (const status of ['ACTIVE', 'EXPIRING', 'REVOKED', 'EXPIRED', 'ENDED', 'PENDING']) {
      metrics.consents.set({ status }, byStatus.get(status) ?? 0)
    }
    metrics.ownedPartitions.set(owners.size)
  }
  const gaugeTimer = setInterval(refreshGauges, 1_000)
  gaugeTimer.unref()

  const updateReadiness = () => {
    const behind = [...owners.values()].filter((o) => !o.caughtUp).length
    readiness.set(
      CONSENTS_CHECK,
      behind === 0,
      behind === 0 ? `${owners.size} partition(s) owned` : `rebuilding ${behind} partition(s)`,
    )
  }

  const offsets = new OffsetReader(options.kafka)
  const endOffset = async (partition: number): Promise<bigint> => {
    const p = (await offsets.topicOffsets(topics.consents)).find((o) => o.partition === partition)
    return p === undefined || p.high <= p.low ? 0n : p.high
  }

  let stopped = false
  // Every assignment (kept partitions too) is read from the start and the group
  // never commits: the owners are rebuilt from scratch, which is what "state
  // rebuilt from Kafka" needs.
  const onAssigned = (partitions: Array<{ partition: number }>) => {
    const assigned = new Set(partitions.map((tp) => tp.partition))
    const previous = [...owners.values()]
    owners.clear()
    for (const owner of previous) void owner.stop()
    for (const partition of assigned) {
      const owner = new PartitionOwner({
        partition,
        kafka: options.kafka,
        topics,
        codecs,
        transactionalIdPrefix,
        schedule,
        sync: { bank: bank as BankClient, cipher, now, settings, metrics, logger, unsavedTokens },
        hooks: options.hooks ?? {},
      })
      owners.set(partition, owner)
      void (async () => {
        // The broker may be briefly unavailable during a rebalance: keep trying while we own the partition.
        for (let attempt = 1; !owner.stopped; attempt++) {
          try {
            await owner.start(() => endOffset(partition))
            break
          } catch (err) {
            logger.warn(
              { err, partition, attempt },
              'could not take over the consents partition yet; retrying',
            )
            readiness.set(CONSENTS_CHECK, false, `partition ${partition}: taking over failed, retrying`)
            await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** Math.min(attempt, 6))))
          }
        }
        await owner.whenCaughtUp()
        if (owners.get(partition) !== owner || owner.stopped) return
        logger.info({ partition, consents: owner.consents().length }, 'consents partition rebuilt; syncing')
        updateReadiness()
      })()
    }
    logger.info({ partitions: [...assigned].sort((a, b) => a - b) }, 'consents partitions assigned')
    updateReadiness()
  }

  const onBatch = async (batch: ReplayBatch) => {
    const owner = owners.get(batch.partition)
    for (const message of batch.records) {
      if (stopped || batch.signal.aborted) return
      if (message.value === null) continue
      let consent: Consent | undefined
      for (let attempt = 1; consent === undefined; attempt++) {
        try {
          consent = await codecs.consent.decode(message.value)
        } catch (err) {
          if ((err as { retriable?: boolean }).retriable !== true || stopped || batch.signal.aborted) {
            // Not ours to repair: the consent stays as its previous record says.
            logger.error(
              { err, partition: batch.partition, offset: message.offset },
              'undecodable consent record skipped',
            )
            break
          }
          await new Promise((r) => setTimeout(r, Math.min(10_000, 200 * 2 ** attempt)))
        }
      }
      if (consent !== undefined) owner?.apply(consent)
    }
    // Markers count: a partition ending in a commit marker is caught up once it is read.
    owner?.progress(batch.nextOffset - 1n)
  }

  const member = createReplayingGroupMember({
    kafka: options.kafka,
    groupId,
    topics: [topics.consents],
    ...(options.groupInstanceId === undefined ? {} : { groupInstanceId: options.groupInstanceId }),
    sessionTimeoutMs: options.consumer?.sessionTimeout ?? 30_000,
    heartbeatIntervalMs: options.consumer?.heartbeatInterval ?? 3_000,
    maxWaitTimeMs: options.consumer?.maxWaitTimeInMs ?? 500,
    onAssigned,
    onBatch,
    onFenced: () =>
      readiness.set(CONSENTS_CHECK, false, `another process joined with instance id ${options.groupInstanceId}; stopped`),
    logger,
  })
  await member.start()

  const view = new ConsentView({
    kafka: options.kafka,
    topic: topics.consents,
    codec: codecs.consent,
    logger,
  })
  let gatewayProducer: RecordProducer | undefined
  let gatewayUrl: string | undefined
  let gatewayApp: ReturnType<typeof buildConsentGateway> | undefined
  if (options.gateway !== false) {
    await view.start()
    gatewayProducer = createRecordProducer(options.kafka, { logger })
    const g = options.gateway as GatewayOptions
    const redirect = options.bank?.redirectUri
    gatewayApp = buildConsentGateway({
      bank: gatewayBank as BankClient,
      cipher,
      signer: new AuthorizationStateSigner({ key: deriveStateKey(options.keyring.active.key), now }),
      customers: new CustomerTokenVerifier({
        key: g.customerTokenKey,
        ...(g.customerTokenAudience === undefined ? {} : { audience: g.customerTokenAudience }),
        ...(g.customerTokenIssuer === undefined ? {} : { issuer: g.customerTokenIssuer }),
        ...(g.customerTokenMaxLifetimeMs === undefined ? {} : { maxLifetimeMs: g.customerTokenMaxLifetimeMs }),
      }),
      callbackBudget: new CallbackBudget(g.callbackBudget ?? DEFAULT_CALLBACK_BUDGET),
      // Secure cookies unless the callback (BANK_REDIRECT_URI) is plain HTTP on loopback.
      secure: redirect === undefined || !isPlainLoopback(redirect),
      ...(g.pkce === undefined ? {} : { pkce: g.pkce }),
      ...(g.limits === undefined ? {} : { limits: g.limits }),
      view,
      producer: gatewayProducer,
      consentsTopic: topics.consents,
      consentCodec: codecs.consent,
      metrics,
      logger,
      now,
    })
    const host = options.gateway?.host ?? '127.0.0.1'
    await gatewayApp.listen({ port: options.gateway?.port ?? 8190, host })
    const address = gatewayApp.server.address() as AddressInfo
    gatewayUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`
    readiness.set(GATEWAY_CHECK, false, 'reading the consents topic')
    const url = gatewayUrl
    void view.whenCaughtUp().then(() => {
      if (!stopped) readiness.set(GATEWAY_CHECK, true, `${url}, ${view.size} consent(s) known`)
    })
    logger.info({ url: gatewayUrl }, 'consent gateway listening')
  }

  let stopping: Promise<void> | undefined
  return {
    gatewayUrl,
    topics,
    metrics,
    metricsRegistry,
    readiness,
    contractDrift,
    ownedPartitions: () => [...owners.keys()].sort((a, b) => a - b),
    ownedConsent: (id) => {
      for (const owner of owners.values()) {
        const c = owner.consents().find((x) => x.consentId === id)
        if (c) return c
      }
      return undefined
    },
    whenCaughtUp: async () => {
      await Promise.all([
        ...[...owners.values()].map((o) => o.whenCaughtUp()),
        ...(options.gateway === false ? [] : [view.whenCaughtUp()]),
      ])
    },
    stop: () => {
      stopping ??= (async () => {
        stopped = true
        clearInterval(gaugeTimer)
        readiness.set(CONSENTS_CHECK, false, 'stopping')
        await gatewayApp?.close()
        await member.stop()
        await Promise.all([...owners.values()].map((o) => o.stop()))
        owners.clear()
        await view.stop()
        await gatewayProducer?.close()
        await offsets.close()
        if (ownsBank) await Promise.all([bank.close(), gatewayBank?.close()])
      })()
      return stopping
    },
  }
}

function isPlainLoopback(url: string): boolean {
  const u = new URL(url)
  return u.protocol === 'http:' && isLoopbackHost(u.hostname)
}
