import { enrichmentApiVars, envVar, kafkaVars, observabilityVars, parse } from '@tep/config'
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
    'items per page asked for; halved automatically when the service answers 400',
    { default: '500' },
  ),
  INVALIDATIONS_FEED_NAME: envVar(
    z.string().regex(/^[A-Za-z0-9._-]+$/, 'expected letters, digits, dot, dash or underscore'),
    'base name of the cursor key and transactional id (one per enrichment API account)',
    {
      default: 'enrichment-v5',
    },
  ),
}
