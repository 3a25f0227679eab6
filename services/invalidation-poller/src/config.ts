import { enrichmentApiVars, envVar, kafkaVars, observabilityVars, parse, tracingVars } from '@tep/config'
import { z } from 'zod'

const LEVELS = ['shop', 'merchant', 'handle'] as const

const levels = parse.csv.pipe(
  z
    .array(z.enum(LEVELS, { message: `expected a comma-separated subset of ${LEVELS.join(', ')}` }))
    .min(1, 'name at least one level'),
)

export const pollerEnv = {
  ...kafkaVars,
  ...enrichmentApiVars,
  ...observabilityVars,
  INVALIDATIONS_START_AT: envVar(
    parse.moment,
    'where to start when no cursor is stored yet: now, an ISO-8601 moment, or a duration ago (7d); ignored once a cursor exists',
    {
      default: 'now',
    },
  ),
  INVALIDATIONS_START_ID: envVar(
    parse.integer(0),
    'exclusive feed item id to start after when no cursor is stored yet, instead of asking item/range (which the description does not detail); ignored once a cursor exists',
    { optional: true },
  ),
  INVALIDATIONS_POLL_INTERVAL: envVar(
    parse.duration,
    'pause between two drains of the feed (each drain reads every page to the end)',
    { default: '5m' },
  ),
  INVALIDATIONS_LEVELS: envVar(
    levels,
    'levels to follow (comma-separated: shop, merchant, handle); part of the cursor key',
    { default: 'shop,merchant,handle' },
  ),
  INVALIDATIONS_PAGE_SIZE: envVar(
    parse.integer(1, 1000),
    'items per page asked for; halved when the service answers 400 for it, doubled back after 5 served pages',
    { default: '500' },
  ),
  INVALIDATIONS_FEED_NAME: envVar(
    z.string().regex(/^[A-Za-z0-9._-]+$/, 'expected letters, digits, dot, dash or underscore'),
    'base name of the cursor key and transactional id (one per enrichment API account)',
    {
      default: 'enrichment-v5',
    },
  ),
  // Last: rarely set, and @tep/tracing validates them itself.
  ...tracingVars,
}
