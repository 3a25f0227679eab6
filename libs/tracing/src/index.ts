export { TracingConfigError } from './errors.ts'
export { readTracingConfig, type ExporterName, type SamplerConfig, type TracingConfig, type TracingEnv } from './tracing-config.ts'
export { startTracing, type StartTracingOptions, type Tracing } from './start-tracing.ts'
