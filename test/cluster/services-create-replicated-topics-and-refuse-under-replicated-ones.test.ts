/**
 * On a three-broker cluster (replication factor 3, min.insync.replicas 2 by the
 * brokers' defaults) a service that creates its topics creates them replicated
 * three times with min.insync.replicas 2, without being told; an existing topic
 * of its catalog with one replica makes it refuse to start, naming the topic.
 * Before this, ensureTopics created every topic with one replica whatever the
 * cluster was.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Admin, ConfigResourceTypes } from '@platformatic/kafka'
import { createKafka, ensureTopics, TOPICS, topicSpec } from '@tep/kafka'
import { startStack, type RunningStack } from '@tep/local-stack'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait-for.ts'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const POLLER_TOPICS = [TOPICS.merchantInvalidations, TOPICS.merchantInvalidationsCursor]

let stack: RunningStack
let dir: string
let admin: Admin

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tep-cluster-topics-'))
  stack = await startStack({ stateDir: path.join(dir, 'stack'), brokers: 3 })
  admin = new Admin({ clientId: 'cluster-topics-test', bootstrapBrokers: stack.brokers })
}, 240_000)

afterAll(async () => {
  await admin?.close().catch(() => {})
  // Killed: its data goes with `dir`, and a controlled shutdown of three nodes at once costs seconds for nothing.
  await stack?.stop({ kill: true })
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** Runs the invalidation poller until it exits or `until` holds; returns its exit code (null: still running, stopped by us) and output. */
async function runPoller(until?: () => Promise<boolean>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'services/invalidation-poller/src/main.ts')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      KAFKA_BROKERS: stack.brokers.join(','),
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      // Nothing answers there: the poller never gets past its start-up, which is all this test needs.
      ENRICHMENT_API_URL: 'http://127.0.0.1:9',
      ENRICHMENT_CLIENT_ID: 'c',
      ENRICHMENT_CLIENT_SECRET: 's',
      METRICS_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr.on('data', (d: Buffer) => (output += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  if (until !== undefined) {
    const result = await Promise.race([exited.then((code) => ({ code })), waitFor('the poller to create its topics', until, { timeoutMs: 120_000, intervalMs: 500 }).then(() => undefined)])
    if (result !== undefined) return { code: result.code, output }
    child.kill('SIGTERM')
    await exited
    return { code: null, output }
  }
  return { code: await exited, output }
}

async function describeTopics(names: string[]) {
  const metadata = await admin.metadata({ topics: names, forceUpdate: true })
  const configs = await admin.describeConfigs({
    includeSynonyms: false,
    resources: names.map((n) => ({ resourceType: ConfigResourceTypes.TOPIC, resourceName: n, configurationKeys: ['min.insync.replicas'] })),
  })
  return names.map((name) => ({
    name,
    replicas: [...new Set(metadata.topics.get(name)!.partitions.map((p) => p.replicas.length))],
    minInsync: configs.find((c) => c.resourceName === name)?.configs.find((c) => c.name === 'min.insync.replicas')?.value,
  }))
}

describe('topics on a three-broker cluster', () => {
  it('refuses to start a service when a topic of its catalog exists with one replica, naming it', { timeout: 180_000 }, async () => {
    // As the catalog has it (partitions, cleanup policy), but with one replica.
    const spec = topicSpec(TOPICS.merchantInvalidations)
    await admin.createTopics({
      topics: [spec.name],
      partitions: spec.partitions,
      replicas: 1,
      configs: [{ name: 'cleanup.policy', value: spec.cleanupPolicy }],
    })
    try {
      const { code, output } = await runPoller()
      expect(code).not.toBe(0)
      expect(output).toContain('TOPIC_UNDER_REPLICATED')
      expect(output).toContain(`${TOPICS.merchantInvalidations} has replication factor 1, expected 3`)
    } finally {
      await admin.deleteTopics({ topics: [TOPICS.merchantInvalidations] })
    }
  })

  it('has a service create its topics with replication factor 3 and min.insync.replicas 2 when told nothing', { timeout: 180_000 }, async () => {
    await waitFor('the deleted topic to be gone', async () => !(await admin.listTopics()).includes(TOPICS.merchantInvalidations), { timeoutMs: 60_000, intervalMs: 250 })
    const { code, output } = await runPoller(async () => {
      const topics = await admin.listTopics()
      return POLLER_TOPICS.every((t) => topics.includes(t))
    })
    expect(code, output).toBeNull()
    expect(await describeTopics(POLLER_TOPICS)).toEqual(POLLER_TOPICS.map((name) => ({ name, replicas: [3], minInsync: '2' })))
  })

  it('refuses a topic with min.insync.replicas 1 on three brokers, and only warns when told to allow it', { timeout: 120_000 }, async () => {
    const name = `min-isr-one-${Date.now()}`
    await admin.createTopics({ topics: [name], partitions: 1, replicas: 3, configs: [{ name: 'min.insync.replicas', value: '1' }] })
    const kafka = createKafka({ brokers: stack.brokers, clientId: 'cluster-topics-test' })
    const spec = { ...topicSpec(TOPICS.merchantInvalidations), name, partitions: 1 }
    const refused = await ensureTopics(kafka, [spec]).catch((e: unknown) => e)
    expect(refused).toMatchObject({ code: 'TOPIC_UNDER_REPLICATED' })
    expect((refused as Error).message).toContain(`${name} has min.insync.replicas=1 on a 3-broker cluster, expected at least 2`)
    const allowed = await ensureTopics(kafka, [spec], { underReplicated: 'warn' })
    expect(allowed.underReplicated.map((f) => f.topic)).toEqual([name])
    expect(allowed.expectedReplicas).toBe(3)
  })
})
