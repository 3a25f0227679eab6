// postinstall: fixes @platformatic/kafka 2.12.1's read_committed filter, which
// DROPS COMMITTED RECORDS. `Consumer#filterUncommittedMessages` keeps one aborted
// range per producer id, from the first offset the broker listed to the producer's
// LAST abort marker in the fetched batches. When a producer aborts a transaction,
// commits others and then aborts one that wrote nothing to this partition (a
// transaction whose send failed after AddPartitionsToTxn: the broker writes the
// marker but lists no aborted data for it), every committed record in between is
// removed from the answer, before any caller sees it. Found on the three-broker
// cluster (issue 20): after a rolling restart the independent checker missed
// hundreds of committed enriched records, and every reader on this client (the
// ingest's table, the refresher's and bank-sync's views, a downstream consumer)
// would have missed them as well. The replacement is the Java consumer's rule
// (CompletedFetch): aborted transactions in first-offset order; a producer is
// aborting from the first offset of each of its listed aborted transactions until
// its next ABORT marker; its transactional batches in between are dropped;
// control batches stay (the stream needs them to advance its offsets).
// Plain JavaScript, idempotent; on any other version it only warns.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

const require = createRequire(import.meta.url)
let dir
try {
  // Its exports map hides package.json: walk up from the entry point.
  dir = path.dirname(require.resolve('@platformatic/kafka'))
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir)
} catch {
  process.exit(0) // not installed (a partial install); nothing to patch
}
const pkgFile = path.join(dir, 'package.json')
const version = JSON.parse(readFileSync(pkgFile, 'utf8')).version
const file = path.join(dir, 'dist', 'clients', 'consumer', 'consumer.js')
const MARK = '/* tep-patch: read_committed keeps committed records (Java rule) */'
const BEFORE = `                if (abortedTransactions.length) {
                    const abortedRanges = new Map();`
const BEFORE_END = `                // Important: The control records are not filtered here but in the MessagesStream to allow proper offset tracking`
const AFTER = `                if (abortedTransactions.length) { ${MARK}
                    const pending = [...abortedTransactions].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
                    const aborting = new Set();
                    let next = 0;
                    partition.records = partition.records.filter(batch => {
                        const lastOffset = batch.firstOffset + BigInt(batch.lastOffsetDelta);
                        while (next < pending.length && pending[next].firstOffset <= lastOffset) {
                            aborting.add(pending[next++].producerId);
                        }
                        if (batch.attributes & IS_CONTROL) {
                            if (batch.records[0]?.key?.readInt16BE(2) === 0) {
                                aborting.delete(batch.producerId);
                            }
                            return true;
                        }
                        return !((batch.attributes & 0x10) !== 0 && aborting.has(batch.producerId));
                    });
                }
`

if (!existsSync(file)) process.exit(0)
const source = readFileSync(file, 'utf8')
if (source.includes(MARK)) process.exit(0)
const start = source.indexOf(BEFORE)
const end = source.indexOf(BEFORE_END)
if (version !== '2.12.1' || start < 0 || end < start) {
  console.warn(`patch-platformatic-kafka: @platformatic/kafka ${version} does not have the expected code; not patched (see scripts/patch-platformatic-kafka.mjs)`)
  process.exit(0)
}
writeFileSync(file, source.slice(0, start) + AFTER + source.slice(end))
console.log(`patch-platformatic-kafka: patched @platformatic/kafka ${version} read_committed filter (committed records between aborted ones are kept)`)
