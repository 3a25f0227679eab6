/**
 * @tep/faults: the fault suite and the chaos soak run as `npm run faults`. What
 * other code needs is the shape of the results files they write (tests read them).
 */
export type { RowResult, SuiteResultFile } from './run-suite.ts'
export type { SoakResultFile } from './soak/run-soak.ts'
export type { FaultRecord, SoakCheck } from './soak/report.ts'
export type { MemoryTrend } from './soak/memory-trend.ts'
