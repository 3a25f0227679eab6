// A vitest `setupFiles` entry: drops KafkaJS's harmless TimeoutNegativeWarning on
// Node 24 (tulios/kafkajs#1751) in test workers so real warnings stay visible.
import { silenceKnownWarnings } from '@tep/local-stack'

silenceKnownWarnings()
