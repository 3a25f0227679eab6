/**
 * The enriched topic of a deployed stack, followed from its start and decoded
 * into a map by transaction id: the deployed-stack tests look up their own ids.
 */
import { AvroSerde, createSchemaRegistry, TOPICS, TopicReader, type Kafka } from '@tep/kafka'
import type { EnrichedTransaction } from '@tep/schemas'

export async function followEnriched(
  kafka: Kafka,
  registryUrl: string,
  into: Map<string, EnrichedTransaction>,
): Promise<TopicReader> {
  const codec = new AvroSerde({ registry: createSchemaRegistry({ url: registryUrl }) }).topic(
    TOPICS.transactionsEnriched,
    'EnrichedTransaction',
  )
  const reader = new TopicReader({
    kafka,
    topics: [TOPICS.transactionsEnriched],
    follow: true,
    onRecords: async (batch) => {
      for (const record of batch.records) {
        const value = await codec.decode(record.value)
        into.set(value.transactionId, value)
      }
    },
  })
  await reader.start()
  return reader
}
