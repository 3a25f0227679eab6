import type { KafkaLogger } from '../logger.ts'
import type { PipelineHooks } from '../pipeline-types.ts'

export type HookEmitter = <K extends keyof PipelineHooks>(name: K, event: Parameters<NonNullable<PipelineHooks[K]>>[0]) => void

/** Calls the pipeline's hooks; a hook that throws is logged and ignored. */
export function hookEmitter(hooks: PipelineHooks, logger: KafkaLogger): HookEmitter {
  return (name, event) => {
    const hook = hooks[name] as ((e: typeof event) => void) | undefined
    if (hook === undefined) return
    try {
      hook(event)
    } catch (err) {
      // A throwing metrics hook after a commit must not look like a failed commit.
      logger.error({ err, hook: name }, 'pipeline hook threw; ignored')
    }
  }
}
