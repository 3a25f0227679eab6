import { createKafkaAdmin, OffsetReader, type Kafka } from '@tep/kafka'
import { Counter, Gauge, Histogram, Readiness, createMetricsRegistry, startHealthServer, type HealthServer } from '@tep/observability'

/** Seconds; from a few milliseconds (idle pipeline) to minutes (outage, backlog). */
const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600]

/** Consumer groups of `npm start`'s former live view (one per run, left on a kept stack): not part of the pipeline. */
export const VIEW_GROUP_PREFIX = 'tep-start-view-'

/**
 * What the services cannot export about themselves because it is a property of
 * Kafka, not of one process: the lag of every consumer group (committed offset vs
 * high watermark, per partition), the records committed to each topic
 * (read_committed, so aborted transactions do not count), and the end-to-end
 * latency of enrichment (the raw event's receivedAt to the enriched record being
 * readable by a downstream consumer). Served on /metrics for Prometheus, job
 * `pipeline-exporter`; `npm start` runs it in-process, compose as its own container.
 */
export class PipelineExporter {
  readonly registry = createMetricsRegistry({ service: 'pipeline-exporter', defaultMetrics: false })
  readonly records = new Counter({ name: 'tep_topic_records_total', help: 'Records committed to each pipeline topic, as read by a read_committed consumer', labelNames: ['topic'], registers: [this.registry] })
  readonly latency = new Histogram({ name: 'tep_end_to_end_latency_seconds', help: 'Raw event receivedAt to the enriched record readable downstream (read_committed)', buckets: LATENCY_BUCKETS, registers: [this.registry] })
  readonly lag = new Gauge({ name: 'tep_consumergroup_lag', help: 'High watermark minus committed offset, per consumer group and partition (transaction markers count as one record)', labelNames: ['group', 'topic', 'partition'], registers: [this.registry] })
  readonly lagPolls = new Counter({ name: 'tep_consumergroup_lag_polls_total', help: 'Consumer lag polls of the exporter, by outcome', labelNames: ['outcome'], registers: [this.registry] })
  /** Total lag per group at the last poll, for the live view. */
  readonly lagByGroup = new Map<string, number>()
  private server: HealthServer | undefined
  private timer: NodeJS.Timeout | undefined
  private polling: Promise<void> = Promise.resolve()
  private readonly options: { kafka: Kafka; topics: readonly string[]; port: number; host?: string; lagIntervalMs?: number }
  private readonly admin: ReturnType<typeof createKafkaAdmin>
  private readonly offsets: OffsetReader

  constructor(options: PipelineExporter['options']) {
    this.options = options
    this.admin = createKafkaAdmin(options.kafka, '-exporter-admin')
    this.offsets = new OffsetReader(options.kafka)
    // Every watched topic has a series from the start, even before its first record.
    for (const topic of options.topics) this.records.inc({ topic }, 0)
  }

  get url(): string | undefined {
    return this.server?.url
  }

  async start(): Promise<void> {
    const readiness = new Readiness()
    this.server = await startHealthServer({ port: this.options.port, host: this.options.host ?? '127.0.0.1', registry: this.registry, readiness })
    await this.pollLag()
    this.timer = setInterval(() => {
      this.polling = this.polling.then(() => this.pollLag())
    }, this.options.lagIntervalMs ?? 5_000)
  }

  /** Called for every record batch the view consumed. */
  countRecords(topic: string, count: number): void {
    this.records.inc({ topic }, count)
  }

  observeLatency(seconds: number): void {
    this.latency.observe(Math.max(0, seconds))
  }

  private async pollLag(): Promise<void> {
    const { admin, offsets: reader } = this
    try {
      const groups = await admin.listGroups()
      const highs = new Map<string, Map<number, { high: number; low: number }>>()
      const highOf = async (topic: string) => {
        let offsets = highs.get(topic)
        if (!offsets) {
          // Read committed: the end a consumer of the group reads to (an open transaction's records not counted).
          offsets = new Map((await reader.topicOffsets(topic, { readCommitted: true })).map((p) => [p.partition, { high: Number(p.high), low: Number(p.low) }]))
          highs.set(topic, offsets)
        }
        return offsets
      }
      const next: Array<{ group: string; topic: string; partition: number; lag: number }> = []
      for (const groupId of groups.keys()) {
        if (groupId.startsWith(VIEW_GROUP_PREFIX)) continue
        const [committedOffsets] = await admin.listConsumerGroupOffsets({ groups: [groupId] })
        for (const { name: topic, partitions } of committedOffsets?.topics ?? []) {
          if (!this.options.topics.includes(topic)) continue
          const ends = await highOf(topic)
          for (const p of partitions) {
            const end = ends.get(p.partitionIndex)
            if (!end) continue
            const committed = Number(p.committedOffset)
            next.push({ group: groupId, topic, partition: p.partitionIndex, lag: Math.max(0, end.high - (committed >= 0 ? committed : end.low)) })
          }
        }
      }
      this.lag.reset()
      this.lagByGroup.clear()
      for (const l of next) {
        this.lag.set({ group: l.group, topic: l.topic, partition: String(l.partition) }, l.lag)
        this.lagByGroup.set(l.group, (this.lagByGroup.get(l.group) ?? 0) + l.lag)
      }
      this.lagPolls.inc({ outcome: 'ok' })
    } catch {
      // The broker may be restarting; the lag stays as last seen and the failure is counted.
      this.lagPolls.inc({ outcome: 'failed' })
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.polling
    await this.server?.close()
    await Promise.all([this.admin.close().catch(() => {}), this.offsets.close()])
  }
}
