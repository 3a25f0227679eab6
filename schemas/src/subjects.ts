/**
 * Registry subject of a topic's values under TopicNameStrategy (`<topic>-value`),
 * the naming every Confluent-compatible client and tool assumes by default.
 */
export function valueSubject(topic: string): string {
  if (topic.length === 0) throw new Error('valueSubject needs a topic name, got an empty string')
  return `${topic}-value`
}

/** Registry subject of a topic's keys (`<topic>-key`); keys here are plain UTF-8 strings, never registered. */
export function keySubject(topic: string): string {
  if (topic.length === 0) throw new Error('keySubject needs a topic name, got an empty string')
  return `${topic}-key`
}
