import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const prometheusDir = path.join(repoRoot, 'deploy/prometheus')
export const rulesFile = path.join(prometheusDir, 'rules/pipeline.rules.yml')

/** Debian's `prometheus` package (installed by scripts/prepare-test.ts); overridable for other layouts. */
export const promtoolPath = process.env.PROMTOOL_PATH?.trim() || '/usr/bin/promtool'
export const prometheusPath = process.env.PROMETHEUS_PATH?.trim() || '/usr/bin/prometheus'

export interface ToolRun {
  ok: boolean
  output: string
}

export function promtool(args: string[], cwd = repoRoot): ToolRun {
  const result = spawnSync(promtoolPath, args, { cwd, encoding: 'utf8' })
  if (result.error) throw new Error(`${promtoolPath} could not run (npm test installs it via scripts/prepare-test.ts): ${result.error.message}`)
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` }
}

/** `promtool check rules` + `promtool test rules` on a deploy/prometheus folder (the real one or a copy). */
export function checkAndTestRules(dir = prometheusDir): ToolRun {
  const check = promtool(['check', 'rules', path.join(dir, 'rules/pipeline.rules.yml')])
  if (!check.ok) return check
  const test = promtool(['test', 'rules', path.join(dir, 'tests/pipeline.rules.test.yml')])
  return { ok: test.ok, output: `${check.output}\n${test.output}` }
}

/** A temporary copy of deploy/prometheus whose rules file went through `edit`. */
export function copyWithEditedRules(edit: (rules: string) => string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tep-prom-'))
  cpSync(prometheusDir, dir, { recursive: true })
  const file = path.join(dir, 'rules/pipeline.rules.yml')
  const before = readFileSync(file, 'utf8')
  const after = edit(before)
  if (after === before) throw new Error('the edit changed nothing: the test would prove nothing')
  writeFileSync(file, after)
  return dir
}

interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ record?: string; alert?: string; expr: string }> }>
}

export function loadRules(file = rulesFile): RuleFile['groups'][number]['rules'] {
  return (parse(readFileSync(file, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules)
}
