/**
 * The entry point of `npm run faults`: turns on Node's module compile cache, then runs
 * run.ts. A static import would be linked, so compiled, before any line here
 * ran; hence the dynamic one. Why the cache: docs/DECISIONS.md, "Processes start
 * from Node's compile cache".
 */
import { enableCompileCache } from 'node:module'

enableCompileCache()
await import('./run.ts')
