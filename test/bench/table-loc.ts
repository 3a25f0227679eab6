/**
 * Lines of code of each table store of services/transaction-ingest (the
 * comparison of docs/DECISIONS.md, "The table store: compact or LMDB"):
 * the files only that store uses, tests excluded; `code` leaves out blank
 * lines and lines that are only comment. Shared by both and not counted:
 * table-reader.ts, avro-table-writer.ts, checkpoint-check.ts, snapshot-store.ts.
 *
 *   npm exec -- node test/bench/table-loc.ts
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'

const src = path.resolve(import.meta.dirname, '../../services/transaction-ingest/src')

export const STORE_FILES = {
  compact: [
    'compact-table.ts',
    'compact-codec.ts',
    'compact-io.ts',
    'avro-cursor.ts',
    'snapshot-table.ts',
    'table-checkpoint.ts',
    'table-checkpointer.ts',
    'table-handover.ts',
    'table-loader-client.ts',
    'table-loader-process.ts',
    'loader-shares.ts',
    'loader-env.ts',
  ],
  lmdb: [
    'lmdb-store/avro-fields.ts',
    'lmdb-store/lmdb-snapshot-table.ts',
    'lmdb-store/lmdb-tables.ts',
    'lmdb-store/lmdb-restore.ts',
    'lmdb-store/lmdb-committer.ts',
  ],
} as const

export function countLines(text: string): { lines: number; code: number } {
  let code = 0
  let inBlock = false
  const lines = text.split('\n')
  for (const raw of lines) {
    const line = raw.trim()
    if (inBlock) {
      if (line.includes('*/')) inBlock = false
      continue
    }
    if (line === '' || line.startsWith('//')) continue
    if (line.startsWith('/*')) {
      if (!line.includes('*/')) inBlock = true
      continue
    }
    code++
  }
  return { lines: lines.length - (text.endsWith('\n') ? 1 : 0), code }
}

/** Files, lines and code lines of each store. */
export function tableStoreLines(): Record<keyof typeof STORE_FILES, { files: number; lines: number; code: number }> {
  const out = {} as Record<keyof typeof STORE_FILES, { files: number; lines: number; code: number }>
  for (const [store, files] of Object.entries(STORE_FILES) as Array<[keyof typeof STORE_FILES, readonly string[]]>) {
    const total = { files: files.length, lines: 0, code: 0 }
    for (const file of files) {
      const counted = countLines(readFileSync(path.join(src, file), 'utf8'))
      total.lines += counted.lines
      total.code += counted.code
    }
    out[store] = total
  }
  return out
}

if (import.meta.main) process.stdout.write(`${JSON.stringify(tableStoreLines(), null, 2)}\n`)
