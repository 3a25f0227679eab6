// postinstall: fixes KafkaJS 2.2.4's idle 1 ms polling loop (tulios/kafkajs#1704,
// #1751; fix as proposed on PR #1768). With nothing pending and no broker
// throttle, RequestQueue re-arms setTimeout(negative → 1 ms) forever, per
// connection: CPU burnt for nothing on our two cores, and a TimeoutNegativeWarning
// on Node 24. The patch stops scheduling when there is nothing to check; a new
// request re-arms the check itself. Plain JavaScript so it runs on any Node that
// runs npm. Idempotent; on any other KafkaJS version it only warns.
import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

const require = createRequire(import.meta.url)
let pkgFile
try {
  pkgFile = require.resolve('kafkajs/package.json')
} catch {
  process.exit(0) // kafkajs not installed (e.g. a partial install); nothing to patch
}
const dir = path.dirname(pkgFile)
const version = JSON.parse(readFileSync(pkgFile, 'utf8')).version
const file = path.join(dir, 'src', 'network', 'requestQueue', 'index.js')
const MARK = '/* tep-patch: no idle polling (kafkajs#1704) */'
const BEFORE = `      if (this.pending.length > 0) {
        scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL
      }
      this.throttleCheckTimeoutId = setTimeout(() => {`
const AFTER = `      if (this.pending.length > 0) {
        scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL
      } else if (scheduleAt <= 0) {
        return ${MARK}
      }
      this.throttleCheckTimeoutId = setTimeout(() => {`

if (!existsSync(file)) process.exit(0)
const source = readFileSync(file, 'utf8')
if (source.includes(MARK)) process.exit(0)
if (version !== '2.2.4' || !source.includes(BEFORE)) {
  console.warn(`patch-kafkajs: kafkajs ${version} does not have the expected code; not patched (see scripts/patch-kafkajs.mjs)`)
  process.exit(0)
}
writeFileSync(file, source.replace(BEFORE, AFTER))
console.log(`patch-kafkajs: patched kafkajs ${version} RequestQueue (no idle 1 ms polling)`)
