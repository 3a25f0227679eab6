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

/** The refresher was started with options that cannot work (no API client, a sweep that cannot refresh in time). */
export class RefresherConfigError extends PipelineError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'REFRESHER_CONFIG_INVALID', retriable: false, details })
  }
}
