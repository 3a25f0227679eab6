/**
 * The pipeline exporter on its own (docker-compose service `pipeline-exporter`):
 * consumer lag per group, records per topic and end-to-end latency on
 * METRICS_PORT/metrics. `npm start` runs the same classes in its own process.
 */
import { handleHelp, loadConfigOrExit } from '@tep/config'
import { AvroSerde, TOPICS, createKafka, createSchemaRegistry } from '@tep/kafka'
import { LiveView, WATCHED } from './live-view.ts'
import { PipelineExporter } from './pipeline-exporter.ts'
import { EXPORTER_ENV } from './standalone-env.ts'

handleHelp({ name: 'pipeline-exporter', summary: 'consumer lag, records per topic and end-to-end latency of the pipeline for Prometheus', env: EXPORTER_ENV, usage: 'usage: node scripts/start/exporter-main.ts' })
const env = loadConfigOrExit('pipeline-exporter', EXPORTER_ENV)
const kafka = createKafka({ brokers: env.KAFKA_BROKERS, clientId: 'tep-pipeline-exporter' })
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: env.SCHEMA_REGISTRY_URL }) })
const exporter = new PipelineExporter({ kafka, topics: WATCHED, port: env.METRICS_PORT, host: '0.0.0.0', lagIntervalMs: env.LAG_INTERVAL })
await exporter.start()
const view = new LiveView({ kafka, enriched: serde.topic(TOPICS.transactionsEnriched, 'EnrichedTransaction'), exporter })
await view.start()
process.stdout.write(`pipeline exporter: ${exporter.url}/metrics\n`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.allSettled([view.stop(), exporter.stop()]).then(() => process.exit(0))
  })
}
