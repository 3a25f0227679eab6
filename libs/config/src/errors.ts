import { PipelineError } from '@tep/errors'

export interface ConfigProblem {
  variable: string
  message: string
}

/**
 * Start-up configuration is wrong. Lists every bad variable at once so an
 * operator fixes them in one go instead of one restart per mistake.
 */
export class ConfigError extends PipelineError {
  readonly problems: ConfigProblem[]

  constructor(service: string, problems: ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.variable}: ${p.message}`).join('\n')
    super(`invalid configuration for ${service}:\n${lines}\nRun with --help to see every variable.`, {
      code: 'CONFIG_INVALID',
      retriable: false,
      details: { service, variables: problems.map((p) => p.variable) },
    })
    this.problems = problems
  }
}
