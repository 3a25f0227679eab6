import type { ThroughputResult } from './processors.ts'

/** The zero-work pass-through rows: measured in alternated rounds (`--rounds`), compared by their medians. */
export const ROUND_SCENARIOS = ['passthrough', 'kafkajs-passthrough', 'kstreams-eos-passthrough', 'eos-passthrough'] as const
export type RoundScenario = (typeof ROUND_SCENARIOS)[number]

export const isRoundScenario = (s: string): s is RoundScenario => (ROUND_SCENARIOS as readonly string[]).includes(s)

/** A row's figure over its rounds: the median round's figures, and every round for the record. */
export interface RoundedResult extends ThroughputResult {
  /** Every round in the order run: events per second and CPU per event. */
  rounds: { eventsPerSecond: number; cpuUsPerEvent: number }[]
}

/**
 * The round with the median events per second (the lower middle one for an even
 * count, so an even count never flatters), with every round listed. A shared
 * machine drifts by a third within minutes (measured 2026-11-27: the plain
 * pass-through 223k, 319k and 364k ev/s within 20 minutes), so rows measured
 * once each, one after the other, compared the machine's moments more than
 * the processors; alternated rounds and medians compare the processors.
 */
export function medianRound(rounds: ThroughputResult[]): RoundedResult {
  if (rounds.length === 0) throw new Error('no rounds to take a median of')
  const sorted = [...rounds].sort((a, b) => a.eventsPerSecond - b.eventsPerSecond)
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!
  return { ...median, rounds: rounds.map((r) => ({ eventsPerSecond: r.eventsPerSecond, cpuUsPerEvent: r.cpuUsPerEvent })) }
}
