// postinstall: five patches of installed packages, each version-checked and idempotent:
// @platformatic/kafka's read_committed filter (below), its buffer's chunk lookups, its
// record encoding, its transactions' partition bookkeeping, and avsc's string writing
// (each described where it is applied).
//
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

/**
 * The folder of package `name` as `require` resolves it, or undefined when it is
 * not installed. Exports maps hide package.json: walk up from the entry point.
 */
function packageDir(require, name) {
  try {
    let found = path.dirname(require.resolve(name))
    while (!existsSync(path.join(found, 'package.json'))) found = path.dirname(found)
    return found
  } catch {
    return undefined
  }
}

const dir = packageDir(createRequire(import.meta.url), '@platformatic/kafka')
if (dir === undefined) process.exit(0) // not installed (a partial install); nothing to patch
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

function patchReadCommitted() {
  if (!existsSync(file)) return
  const source = readFileSync(file, 'utf8')
  if (source.includes(MARK)) return
  const start = source.indexOf(BEFORE)
  const end = source.indexOf(BEFORE_END)
  if (version !== '2.12.1' || start < 0 || end < start) {
    console.warn(`patch-platformatic-kafka: @platformatic/kafka ${version} does not have the expected code; not patched (see scripts/patch-platformatic-kafka.mjs)`)
    return
  }
  writeFileSync(file, source.slice(0, start) + AFTER + source.slice(end))
  console.log(`patch-platformatic-kafka: patched @platformatic/kafka ${version} read_committed filter (committed records between aborted ones are kept)`)
}

// Second patch: @platformatic/dynamic-buffer 0.3.1, the buffer every answer is
// parsed from, finds the chunk holding an offset by walking its chunk list from
// the first chunk on EVERY read (`#findInitialBuffer`). A fetch answer arrives
// as hundreds of socket chunks (16 MiB in 64 KiB reads: 256), so each of the
// ~9 reads per record walks ~128 chunks on average: the parse of a record
// batch grows with the square of the answer's size. Measured on the table load
// (1,100,000 records, 16 MiB answers): the parser's readVarInt was the second
// largest self time (7.7 %), and the load cost 7.4 us of CPU per record. The
// patch remembers the chunk the last lookup ended in and walks on from there
// when the next offset is not before it (a parse reads forward); any change
// of the chunk list before that chunk (prepend, consume) forgets it.
const DB_MARK = '/* tep-patch: chunk lookups resume from the last one */'
const DB_BEFORE = `    #findInitialBuffer(start) {
        let current = 0;
        while (start > 0 && start >= this.buffers[current].length) {
            start -= this.buffers[current].length;
            current++;
        }
        return [start, current];
    }`
const DB_AFTER = `    #hintIndex = 0; ${DB_MARK}
    #hintBase = 0;
    #forgetHint() {
        this.#hintIndex = 0;
        this.#hintBase = 0;
    }
    #findInitialBuffer(start) {
        let current = 0;
        let base = 0;
        if (start >= this.#hintBase) {
            current = this.#hintIndex;
            base = this.#hintBase;
        }
        let rest = start - base;
        while (rest > 0 && rest >= this.buffers[current].length) {
            rest -= this.buffers[current].length;
            base += this.buffers[current].length;
            current++;
        }
        this.#hintIndex = current;
        this.#hintBase = base;
        return [rest, current];
    }`
// And the 64-bit varints (a record's timestamp delta): BigInt arithmetic on
// every byte. Up to 7 bytes (49 bits) the value is exact as a double: summed as
// a number and made a BigInt once; a longer one takes the original loop.
const DB_VARINT64_BEFORE = `    readUnsignedVarInt64(offset) {
        let i = 0n;`
const DB_VARINT64_AFTER = `    readUnsignedVarInt64(offset) {
        if (offset >= 0 && offset < this.length) {
            let [at, chunk] = this.#findInitialBuffer(offset);
            let number = 0;
            let factor = 1;
            for (let read = 1; read <= 7; read++) {
                const byte = this.buffers[chunk][at++];
                if (at >= this.buffers[chunk].length) {
                    chunk++;
                    at = 0;
                }
                number += (byte & 0x7f) * factor;
                if (byte < 0x80) {
                    return [BigInt(number), read];
                }
                if (chunk >= this.buffers.length) {
                    break;
                }
                factor *= 128;
            }
        }
        return this.#readUnsignedVarInt64Big(offset);
    }
    #readUnsignedVarInt64Big(offset) {
        let i = 0n;`
/** Each method that changes the chunks before the remembered one, and where it forgets it. */
const DB_FORGET = [
  [`    prepend(buffer) {
        this.buffers.unshift(buffer);`, `    prepend(buffer) {
        this.#forgetHint();
        this.buffers.unshift(buffer);`],
  [`    prependFrom(DynamicBuffer) {
        const buffers = DynamicBuffer.buffers;`, `    prependFrom(DynamicBuffer) {
        this.#forgetHint();
        const buffers = DynamicBuffer.buffers;`],
  [`        if (current > 0) {
            this.buffers.splice(0, current);
        }`, `        this.#forgetHint();
        if (current > 0) {
            this.buffers.splice(0, current);
        }`],
]

function patchChunkLookup() {
  // Resolved as @platformatic/kafka resolves it (its dependency, wherever npm put it).
  const dbDir = packageDir(createRequire(path.join(dir, 'package.json')), '@platformatic/dynamic-buffer')
  if (dbDir === undefined) return
  const dbVersion = JSON.parse(readFileSync(path.join(dbDir, 'package.json'), 'utf8')).version
  const dbFile = path.join(dbDir, 'dist', 'index.js')
  if (!existsSync(dbFile)) return
  let source = readFileSync(dbFile, 'utf8')
  if (source.includes(DB_MARK)) return
  const fits =
    dbVersion === '0.3.1' &&
    source.split(DB_BEFORE).length === 2 &&
    source.split(DB_VARINT64_BEFORE).length === 2 &&
    DB_FORGET.every(([before]) => source.split(before).length === 2)
  if (!fits) {
    console.warn(`patch-platformatic-kafka: @platformatic/dynamic-buffer ${dbVersion} does not have the expected code; not patched (see scripts/patch-platformatic-kafka.mjs)`)
    return
  }
  source = source.replace(DB_BEFORE, DB_AFTER).replace(DB_VARINT64_BEFORE, DB_VARINT64_AFTER)
  for (const [before, after] of DB_FORGET) source = source.replace(before, after)
  writeFileSync(dbFile, source)
  console.log(`patch-platformatic-kafka: patched @platformatic/dynamic-buffer ${dbVersion} chunk lookups and 64-bit varints (an answer's parse no longer walks its chunks from the first on every read)`)
}

// Third patch: producing encoded each record field by field into a fresh
// Buffer per field (DynamicBuffer#writeUInt8, #writeUnsignedVarInt, ...: ~8
// small Buffer objects and an array of them per record, concatenated again
// for the request). In the exactly-once pass-through's profile (issue 21) the
// garbage collector was 21 % of the CPU. The patch writes a record into one
// buffer sized first: same bytes (Kafka's record format: length, attributes,
// zig-zag timestamp and offset deltas, key, value, headers), one allocation.
// Anything unusual (a key or value that is not a Buffer, headers that are not
// a Map, a timestamp delta beyond 2^52) takes the original code.
const REC_MARK = '/* tep-patch: one buffer per produced record */'
const recordsFile = path.join(dir, 'dist', 'protocol', 'records.js')
const REC_BEFORE = `export function createRecord(message, offsetDelta, firstTimestamp) {
    return Writer.create()`
const REC_AFTER = `function zigZagSize(value) { ${REC_MARK}
    let v = value >= 0 ? value * 2 : -value * 2 - 1;
    let size = 1;
    while (v >= 0x80) {
        v = Math.floor(v / 0x80);
        size++;
    }
    return size;
}
function writeZigZag(buffer, at, value) {
    let v = value >= 0 ? value * 2 : -value * 2 - 1;
    while (v >= 0x80) {
        buffer[at++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
    }
    buffer[at++] = v;
    return at;
}
function bytesSize(value) {
    return value == null ? 1 : zigZagSize(value.length) + value.length;
}
function writeBytes(buffer, at, value) {
    if (value == null) {
        return writeZigZag(buffer, at, -1);
    }
    at = writeZigZag(buffer, at, value.length);
    if (value.length > 0) {
        buffer.set(value, at);
    }
    return at + value.length;
}
function isBytes(value) {
    return value == null || Buffer.isBuffer(value);
}
export function createRecord(message, offsetDelta, firstTimestamp) {
    const { key, value, headers } = message;
    const delta = (message.timestamp ?? BigInt(Date.now())) - firstTimestamp;
    if (!isBytes(key) || !isBytes(value) || (headers != null && !(headers instanceof Map)) || delta > 4503599627370495n || delta < -4503599627370495n) {
        return createRecordWithWriter(message, offsetDelta, firstTimestamp);
    }
    const timestampDelta = Number(delta);
    let size = 1 + zigZagSize(timestampDelta) + zigZagSize(offsetDelta) + bytesSize(key) + bytesSize(value) + zigZagSize(headers?.size ?? 0);
    if (headers != null) {
        for (const [headerKey, headerValue] of headers) {
            if (!isBytes(headerKey) || !isBytes(headerValue)) {
                return createRecordWithWriter(message, offsetDelta, firstTimestamp);
            }
            size += bytesSize(headerKey) + bytesSize(headerValue);
        }
    }
    const buffer = Buffer.allocUnsafe(zigZagSize(size) + size);
    let at = writeZigZag(buffer, 0, size);
    buffer[at++] = 0; // Attributes are unused for now
    at = writeZigZag(buffer, at, timestampDelta);
    at = writeZigZag(buffer, at, offsetDelta);
    at = writeBytes(buffer, at, key);
    at = writeBytes(buffer, at, value);
    at = writeZigZag(buffer, at, headers?.size ?? 0);
    if (headers != null) {
        for (const [headerKey, headerValue] of headers) {
            at = writeBytes(buffer, at, headerKey);
            at = writeBytes(buffer, at, headerValue);
        }
    }
    return new Writer(new DynamicBuffer(buffer));
}
export function createRecordWithWriter(message, offsetDelta, firstTimestamp) {
    return Writer.create()`

function patchRecordEncoding() {
  if (!existsSync(recordsFile)) return
  const source = readFileSync(recordsFile, 'utf8')
  if (source.includes(REC_MARK)) return
  if (version !== '2.12.1' || source.split(REC_BEFORE).length !== 2) {
    console.warn(`patch-platformatic-kafka: @platformatic/kafka ${version} does not have the expected record encoder; not patched (see scripts/patch-platformatic-kafka.mjs)`)
    return
  }
  writeFileSync(recordsFile, source.replace(REC_BEFORE, REC_AFTER))
  console.log(`patch-platformatic-kafka: patched @platformatic/kafka ${version} record encoding (one buffer per produced record)`)
}

// Fourth patch: avsc 5.7.9's Tap#writeString, which every Avro string field
// of every encoded event goes through, measures each string with
// Buffer.byteLength (a call into C++) before writing it, and for strings of 64
// bytes or fewer then copies it char by char in JavaScript. The ingest writes
// ~40 strings per enriched event (ids, names, codes, currency, dates), nearly
// all short ASCII: in its profile writeString was the largest self time after
// the garbage collector (5 % of the process's CPU). The patch checks a short
// string for ASCII in one pass and writes it directly (its length is its byte
// count, and the zig-zag varint of a length below 64 is one byte: 2n); any
// other string takes the original code, kept as Tap#tepWriteStringOriginal, with one fix:
// its char loop ran to the string's UTF-8 byte count instead of its length, so a short
// string with non-ASCII characters wrote 3 bytes of garbage per extra byte past its own
// end (overwritten by the next field, or left in the caller's buffer after the value).
const avscDir = packageDir(createRequire(import.meta.url), 'avsc')
const avscVersion = avscDir === undefined ? undefined : JSON.parse(readFileSync(path.join(avscDir, 'package.json'), 'utf8')).version
const avscFile = avscDir === undefined ? undefined : path.join(avscDir, 'lib', 'utils.js')
const AVSC_MARK = '/* tep-patch: short ASCII strings without Buffer.byteLength */'
const AVSC_BEFORE = `Tap.prototype.writeString = function (s) {
  var len = Buffer.byteLength(s);`
const AVSC_AFTER = `Tap.prototype.writeString = function (s) { ${AVSC_MARK}
  var n = s.length;
  if (n < 64) {
    var i = 0;
    while (i < n && s.charCodeAt(i) < 0x80) i++;
    if (i === n) {
      var buf = this.buf;
      var pos = this.pos;
      this.pos = pos + 1 + n;
      if (this.pos > buf.length) {
        return;
      }
      buf[pos++] = n << 1;
      for (i = 0; i < n; i++) {
        buf[pos + i] = s.charCodeAt(i);
      }
      return;
    }
  }
  this.tepWriteStringOriginal(s);
};

Tap.prototype.tepWriteStringOriginal = function (s) {
  var len = Buffer.byteLength(s);`

const AVSC_LOOP_BEFORE = `    for (i = 0, l = len; i < l; i++) {
      c1 = s.charCodeAt(i);`
const AVSC_LOOP_AFTER = `    for (i = 0, l = s.length; i < l; i++) {
      c1 = s.charCodeAt(i);`

function patchAvscStrings() {
  if (avscFile === undefined || !existsSync(avscFile)) return
  const source = readFileSync(avscFile, 'utf8')
  if (source.includes(AVSC_MARK)) return
  if (avscVersion !== '5.7.9' || source.split(AVSC_BEFORE).length !== 2 || source.split(AVSC_LOOP_BEFORE).length !== 2) {
    console.warn(`patch-platformatic-kafka: avsc ${avscVersion} does not have the expected Tap#writeString; not patched (see scripts/patch-platformatic-kafka.mjs)`)
    return
  }
  writeFileSync(avscFile, source.replace(AVSC_BEFORE, AVSC_AFTER).replace(AVSC_LOOP_BEFORE, AVSC_LOOP_AFTER))
  console.log(`patch-platformatic-kafka: patched avsc ${avscVersion} Tap#writeString (short ASCII strings written without Buffer.byteLength)`)
}

// Fifth patch: Transaction#addPartitions, which a transactional producer's every
// send runs over all its messages to find the partitions the transaction does not
// hold yet. Per message it built a `topic:partition` string and looked it up in a
// Set, and looked the topic up in the metadata: a 3,000-record send asked 3,000
// times about its few partitions. In the exactly-once pass-through's profile it
// was 0.46 µs of ~15 µs per record, all of it work a plain producer does not do
// (issue 21). The patch asks once per topic and partition of the send; the
// partitions it adds, and the order it adds them in, are the same.
const TXN_MARK = '/* tep-patch: addPartitions asks once per partition of a send */'
const transactionFile = path.join(dir, 'dist', 'clients', 'producer', 'transaction.js')
const TXN_BEFORE = `        for (const message of messages) {
            message.partition %= metadata.topics.get(message.topic).partitionsCount;
            const { topic, partition } = message;
            const key = \`\${topic}:\${partition}\`;`
const TXN_AFTER = `        ${TXN_MARK}
        const seenByTopic = new Map();
        let lastTopic;
        let lastCount = 0;
        let lastSeen;
        for (const message of messages) {
            if (message.topic !== lastTopic) {
                lastTopic = message.topic;
                lastCount = metadata.topics.get(lastTopic).partitionsCount;
                lastSeen = seenByTopic.get(lastTopic);
                if (!lastSeen) {
                    lastSeen = new Set();
                    seenByTopic.set(lastTopic, lastSeen);
                }
            }
            message.partition %= lastCount;
            if (lastSeen.has(message.partition)) {
                continue;
            }
            lastSeen.add(message.partition);
            const { topic, partition } = message;
            const key = \`\${topic}:\${partition}\`;`

function patchAddPartitions() {
  if (!existsSync(transactionFile)) return
  const source = readFileSync(transactionFile, 'utf8')
  if (source.includes(TXN_MARK)) return
  if (version !== '2.12.1' || source.split(TXN_BEFORE).length !== 2) {
    console.warn(`patch-platformatic-kafka: @platformatic/kafka ${version} does not have the expected Transaction#addPartitions; not patched (see scripts/patch-platformatic-kafka.mjs)`)
    return
  }
  writeFileSync(transactionFile, source.replace(TXN_BEFORE, TXN_AFTER))
  console.log(`patch-platformatic-kafka: patched @platformatic/kafka ${version} Transaction#addPartitions (once per partition of a send)`)
}

patchReadCommitted()
patchChunkLookup()
patchRecordEncoding()
patchAvscStrings()
patchAddPartitions()
