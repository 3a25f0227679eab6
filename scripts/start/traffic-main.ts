/**
 * Sample raw traffic on its own (docker-compose service `sample-traffic`, profile
 * `demo`): the same events as `npm start`, TRAFFIC_RATE per second.
 */
import { handleHelp, loadConfigOrExit } from '@tep/config'
import { AvroSerde, TOPICS, createKafka, createRecordProducer, createSchemaRegistry } from '@tep/kafka'
import { SimDataset } from '@tep/sim-data'
import { SampleTraffic } from './card-traffic.ts'
import { TRAFFIC_ENV } from './standalone-env.ts'

handleHelp({ name: 'sample-traffic', summary: 'raw card transactions and bank transfers at a steady rate, for demos', env: TRAFFIC_ENV, usage: 'usage: node scripts/start/traffic-main.ts' })
const env = loadConfigOrExit('sample-traffic', TRAFFIC_ENV)
const kafka = createKafka({ brokers: env.KAFKA_BROKERS, clientId: 'tep-sample-traffic' })
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: env.SCHEMA_REGISTRY_URL }) })
const producer = createRecordProducer(kafka)
const traffic = new SampleTraffic({ producer, codec: serde.topic(TOPICS.transactionsRaw, 'RawTransaction'), dataset: new SimDataset(), ratePerSecond: env.TRAFFIC_RATE, topic: TOPICS.transactionsRaw, runId: Date.now().toString(36) })
traffic.start()
process.stdout.write(`sample traffic: ${env.TRAFFIC_RATE} raw events/s to ${TOPICS.transactionsRaw}\n`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void traffic
      .stop()
      .then(() => producer.close())
      .then(() => process.exit(0))
  })
}
