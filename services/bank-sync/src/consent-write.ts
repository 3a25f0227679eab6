import type { RecordProducer, TopicCodec } from '@tep/kafka'
import type { Consent } from '@tep/schemas'
import type { ConsentView } from './consent-view.ts'

/**
 * A gateway's write of a consent (granted, or ended on request): to the consents
 * topic first, then to the local view, so the view never shows what Kafka refused.
 */
export async function writeConsent(
  o: { producer: RecordProducer; consentsTopic: string; consentCodec: TopicCodec<Consent>; view: ConsentView },
  consent: Consent,
): Promise<void> {
  await o.producer.send(o.consentsTopic, [{ key: consent.consentId, value: await o.consentCodec.encode(consent) }])
  o.view.apply(consent)
}
