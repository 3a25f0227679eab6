import { PipelineError } from '@tep/errors'

/** A record on a topic the refresher is not wired for: a deployment mistake, sent to the DLQ. */
export class UnexpectedTopicError extends PipelineError {
  constructor(topic: string) {
    super(`the refresher does not consume ${topic}; check the topic names it was started with`, {
      code: 'REFRESHER_UNEXPECTED_TOPIC',
      retriable: false,
      details: { topic },
    })
  }
}
