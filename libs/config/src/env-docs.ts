import type { EnvSpec } from './env-spec.ts'

/**
 * What a README's variable tables leave out of `spec`: a variable no table row
 * names, or a row that does not show the variable's default. Returns one line
 * per problem (empty when the README is complete), for a README test that keeps
 * the docs and the code from drifting apart. A row may document several
 * variables (`| \`A_USER\` / \`A_PASSWORD\` | \`u\` / \`p\` |`). Defaults of
 * secrets are not required: a README may say "built-in" rather than print them.
 */
export function envDocProblems(readme: string, spec: EnvSpec): string[] {
  const rows = readme.split('\n').filter((line) => line.trimStart().startsWith('|'))
  const problems: string[] = []
  for (const [name, variable] of Object.entries(spec)) {
    const row = rows.find((line) => line.includes(`\`${name}\``))
    if (row === undefined) {
      problems.push(`${name}: no table row names it`)
    } else if (variable.default !== undefined && !variable.secret && !row.includes(`\`${variable.default}\``)) {
      problems.push(`${name}: its row does not show the default \`${variable.default}\``)
    }
  }
  return problems
}
