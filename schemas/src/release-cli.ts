import { mkdirSync, writeFileSync } from 'node:fs'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import { avroSchemas, SCHEMA_NAMES, type SchemaName } from './index.ts'
import { loadReleasedSchemas, RELEASED_DIRECTORY } from './released-schemas.ts'

const HELP = `Usage: npm exec -- node schemas/src/release-cli.ts [--check] [Name ...]

Freezes the current self-contained Avro schema of each named event (default: all)
as schemas/avro/released/<Name>/v<N+1>.avsc when it differs from the latest
released version. Run it when a schema change ships; the compatibility tests then
keep every later change a BACKWARD-compatible reader of it.

  --check     write nothing; exit 1 and list the schemas that changed since release
  -h, --help  show this text
Names: ${SCHEMA_NAMES.join(', ')}`

let parsed
try {
  parsed = parseArgs({
    options: {
      check: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
  })
} catch (err) {
  console.error(`${(err as Error).message}\n\n${HELP}`)
  process.exit(2)
}
const { values, positionals } = parsed
if (values.help) {
  console.log(HELP)
  process.exit(0)
}
const unknown = positionals.filter((n) => !(SCHEMA_NAMES as readonly string[]).includes(n))
if (unknown.length > 0) {
  console.error(`unknown schema name(s): ${unknown.join(', ')}. Known: ${SCHEMA_NAMES.join(', ')}`)
  process.exit(2)
}
const names = (positionals.length > 0 ? positionals : SCHEMA_NAMES) as SchemaName[]
const changed: string[] = []
for (const name of names) {
  const current = avroSchemas[name].schema
  const released = loadReleasedSchemas(name)
  const latest = released.at(-1)
  if (latest !== undefined && isDeepStrictEqual(latest.schema, current)) continue
  const version = (latest?.version ?? 0) + 1
  changed.push(`${name} v${version}`)
  if (values.check) continue
  const dir = new URL(`${name}/`, RELEASED_DIRECTORY)
  mkdirSync(dir, { recursive: true })
  writeFileSync(new URL(`v${version}.avsc`, dir), `${JSON.stringify(current, null, 2)}\n`)
  console.log(`released ${name} v${version}`)
}
if (values.check && changed.length > 0) {
  console.error(
    `unreleased schema changes: ${changed.join(', ')} (run npm exec -- node schemas/src/release-cli.ts to freeze them)`,
  )
  process.exit(1)
}
if (changed.length === 0) console.log('every schema equals its latest released version')
