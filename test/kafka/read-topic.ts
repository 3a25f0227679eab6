// Moved to test/support/read-topic.ts; this re-export serves test/ingest until it imports from there.
export { readTopic, valuesByPartition } from '../support/read-topic.ts'
export type { ReadTopicOptions } from '../support/read-topic.ts'
