import { envVar, kafkaVars, observabilityVars, parse } from '@tep/config'

/** Environment of scripts/start/exporter-main.ts (compose service pipeline-exporter). */
export const EXPORTER_ENV = {
  ...kafkaVars,
  ...observabilityVars,
  LAG_INTERVAL: envVar(parse.duration, 'how often consumer group lag is read from Kafka', { default: '5s' }),
}

/** Environment of scripts/start/traffic-main.ts (compose service sample-traffic, profile demo). */
export const TRAFFIC_ENV = {
  ...kafkaVars,
  LOG_LEVEL: observabilityVars.LOG_LEVEL,
  TRAFFIC_RATE: envVar(parse.integer(1, 100_000), 'raw events per second', { default: '20' }),
}
