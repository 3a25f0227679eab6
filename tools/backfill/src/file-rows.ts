import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { parse } from 'csv-parse'
import { jsonToFields, KNOWN_FIELDS, REJECT_CODES, RowRejection, type RowFields } from './row-mapping.ts'

export type FileFormat = 'csv' | 'jsonl'

/** One row of an input file: its fields, or why it could not even be read. */
export type FileRow =
  | { line: number; fields: RowFields }
  | { line: number; rejection: { code: string; message: string } }

export class InputFileError extends Error {
  readonly code = 'BACKFILL_BAD_INPUT_FILE'
}

/** csv for *.csv(.gz), jsonl for *.jsonl / *.ndjson / *.json(.gz); anything else needs --format. */
export function formatOf(path: string): FileFormat | undefined {
  const name = path.toLowerCase().replace(/\.gz$/, '')
  if (name.endsWith('.csv')) return 'csv'
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson') || name.endsWith('.json')) return 'jsonl'
  return undefined
}

async function isGzip(path: string): Promise<boolean> {
  const fh = await open(path, 'r')
  try {
    const buf = Buffer.alloc(2)
    const { bytesRead } = await fh.read(buf, 0, 2, 0)
    return bytesRead === 2 && buf[0] === 0x1f && buf[1] === 0x8b
  } finally {
    await fh.close()
  }
}

/** The file's text stream, gunzipped when it starts with the gzip magic bytes (whatever its name). */
export async function openText(path: string): Promise<Readable> {
  const stream = createReadStream(path)
  return (await isGzip(path)) ? stream.pipe(createGunzip()) : stream
}

/**
 * SHA-256 of the file's bytes (as stored, compressed or not: the identity of a
 * backfill) and its number of text lines (for the ETA before loading ends).
 */
export async function fingerprint(path: string): Promise<{ sha256: string; lines: number }> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  let lines = 0
  let last = 10
  for await (const chunk of await openText(path)) {
    const buf = chunk as Buffer
    for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines += 1
    if (buf.length > 0) last = buf[buf.length - 1]!
  }
  if (last !== 10) lines += 1
  return { sha256: hash.digest('hex'), lines }
}

/** Rows of a file in order, starting after line `afterLine` (resume). */
export async function* readRows(path: string, format: FileFormat, afterLine = 0): AsyncGenerator<FileRow> {
  if (format === 'jsonl') yield* jsonlRows(path, afterLine)
  else yield* csvRows(path, afterLine)
}

async function* jsonlRows(path: string, afterLine: number): AsyncGenerator<FileRow> {
  const lines = createInterface({ input: await openText(path), crlfDelay: Infinity })
  let line = 0
  for await (const text of lines) {
    line += 1
    if (line <= afterLine || text.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      yield { line, rejection: { code: REJECT_CODES.parse, message: `not JSON: ${(err as Error).message}` } }
      continue
    }
    try {
      yield { line, fields: jsonToFields(value) }
    } catch (err) {
      if (!(err instanceof RowRejection)) throw err
      yield { line, rejection: { code: err.code, message: err.message } }
    }
  }
}

/**
 * CSV (RFC 4180, comma, first line = header of field names). An unquoted empty
 * cell is an absent value (null: the API parameter is omitted), a quoted empty
 * cell `""` is a present, empty value (sent empty).
 */
async function* csvRows(path: string, afterLine: number): AsyncGenerator<FileRow> {
  const skipped: FileRow[] = []
  const parser = (await openText(path)).pipe(
    parse({
      info: true,
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      skip_records_with_error: true,
      cast: (value, context) => (value === '' && !context.quoting ? (null as unknown as string) : value),
    }),
  )
  parser.on('skip', (err: Error & { lines?: number }) => {
    skipped.push({
      line: err.lines ?? 0,
      rejection: { code: REJECT_CODES.parse, message: `not valid CSV: ${err.message}` },
    })
  })
  let header: string[] | undefined
  for await (const item of parser as AsyncIterable<{ record: (string | null)[]; info: { lines: number } }>) {
    while (skipped.length > 0) {
      const s = skipped.shift()!
      if (s.line > afterLine) yield s
    }
    const { record, info } = item
    if (header === undefined) {
      header = record.map((h) => (h ?? '').trim())
      const unknown = header.filter((h) => !KNOWN_FIELDS.includes(h))
      if (unknown.length > 0)
        throw new InputFileError(
          `${path}: unknown column(s) ${unknown.join(', ')} in the CSV header; known fields: ${KNOWN_FIELDS.join(', ')}`,
        )
      continue
    }
    const line = info.lines
    if (line <= afterLine) continue
    if (record.length !== header.length) {
      yield {
        line,
        rejection: {
          code: REJECT_CODES.parse,
          message: `expected ${header.length} columns as in the header, got ${record.length}`,
        },
      }
      continue
    }
    const fields: RowFields = {}
    header.forEach((name, i) => {
      fields[name] = record[i] ?? null
    })
    yield { line, fields }
  }
  for (const s of skipped) if (s.line > afterLine) yield s
  if (header === undefined) throw new InputFileError(`${path}: empty CSV file (no header line)`)
}
