import { enrichmentApiVars, envVar, kafkaVars, observabilityVars, parse, tracingVars } from '@tep/config'

export const refresherEnv = {
  ...kafkaVars,
  ...enrichmentApiVars,
  ...observabilityVars,
  INVALIDATIONS_ENABLED: envVar(
    parse.boolean,
    'true when the invalidation poller runs (entries are kept until invalidated); false turns on the sweep',
    {
      default: 'true',
    },
  ),
  REFRESH_MAX_AGE: envVar(
    parse.duration,
    'without invalidations, the oldest an entry may get (spec limit: one week)',
    { default: '7d' },
  ),
  SWEEP_INTERVAL: envVar(
    parse.duration,
    'how often the sweep looks for old entries (only when INVALIDATIONS_ENABLED=false)',
    { default: '1h' },
  ),
  SWEEP_MARGIN: envVar(
    parse.duration,
    'entries are re-fetched this long (plus one SWEEP_INTERVAL) before REFRESH_MAX_AGE',
    { default: '1h' },
  ),
  SWEEP_MAX_PER_RUN: envVar(
    parse.integer(1),
    'most refresh requests per entity kind and sweep (the rest follow next sweep)',
    { default: '10000' },
  ),
  REENRICH_HANDLES: envVar(
    parse.boolean,
    're-enriches the transactions whose handle was invalidated, within REENRICH_WINDOW and REENRICH_MAX_PER_RUN; false turns it off (see README)',
    { default: 'true' },
  ),
  REENRICH_INTERVAL: envVar(
    parse.duration,
    'how often handle invalidations are acted on (only with REENRICH_HANDLES=true)',
    { default: '5m' },
  ),
  REENRICH_WINDOW: envVar(
    parse.duration,
    'how far back each automatic run reads transactions.enriched.v1 (the Kafka budget of a run; older results: the reenrich tool)',
    { default: '24h' },
  ),
  REENRICH_MAX_PER_RUN: envVar(
    parse.integer(1),
    'most transactions republished per re-enrichment run, one findBy each (the rest follow next run)',
    { default: '10000' },
  ),
  REFRESH_FETCH_CONCURRENCY: envVar(
    parse.integer(1, 256),
    'shop/merchant reads in flight per consumed batch',
    { default: '8' },
  ),
  // Last: rarely set, and @tep/tracing validates them itself.
  ...tracingVars,
}
