import { envVar, observabilityVars, parse } from '@tep/config'

/**
 * The simulator's environment: the credentials it accepts. Defaults are public
 * sandbox values that the pipeline's own defaults and tests use.
 */
export const SIM_ENV = {
  SIM_CLIENT_ID: envVar(parse.nonEmpty, 'OAuth client id accepted by the token endpoint (all rights)', { default: 'sim-client' }),
  SIM_CLIENT_SECRET: envVar(parse.nonEmpty, 'its client secret', { default: 'sim-secret', secret: true }),
  SIM_LIMITED_CLIENT_ID: envVar(parse.nonEmpty, 'a second OAuth client with only the find and read rights (for 403 tests)', { default: 'sim-limited' }),
  SIM_LIMITED_CLIENT_SECRET: envVar(parse.nonEmpty, 'its client secret', { default: 'sim-limited-secret', secret: true }),
  SIM_BASIC_USER: envVar(parse.nonEmpty, 'HTTP Basic user name (all rights)', { default: 'sim-user' }),
  SIM_BASIC_PASSWORD: envVar(parse.nonEmpty, 'its password', { default: 'sim-password', secret: true }),
  SIM_CONTRACT_DRIFT: envVar(parse.nonEmpty, 'as --contract-drift=<seed>: serve every shape the description leaves open, drawn from this seed', { optional: true }),
  LOG_LEVEL: observabilityVars.LOG_LEVEL,
}
