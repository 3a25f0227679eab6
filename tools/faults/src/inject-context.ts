import type { FlowMonitor } from './flow-monitor.ts'
import type { FaultSystem } from './system.ts'

/**
 * What a fault gets to act on: the running system and its flow monitor, the run's log line, its seeded
 * randomness and its timing. Its own file, so that the single faults and the rows
 * built from them (scenarios.ts) both import it without importing each other.
 */
export interface InjectContext {
  system: FaultSystem
  /** The run's flow monitor (started): what a row waits on, without Kafka clients of its own. */
  monitor: FlowMonitor
  say: (line: string) => void
  /** Seeded uniform [0, 1). */
  random: () => number
  /** How long the scenario's traffic is expected to flow, ms; faults are spread over it. */
  plannedMs: number
  startedAt: number
  /** One fault of each kind, shorter outages: the integration suite's short version. */
  quick: boolean
}
