import js from '@eslint/js'
import tseslint from 'typescript-eslint'

// Import boundaries (docs/CONVENTIONS.md "Imports between packages"). Each
// pattern names why it refuses and what to use instead. no-restricted-imports
// reports every group that matches, so the patterns barely overlap: only a
// simulator's src/ gets two messages, and both are true.
const SIMULATOR_PACKAGES = ['@tep/sim-data', '@tep/sample-traffic', '@tep/enrichment-sim', '@tep/bank-sim']

/** Everywhere, tests included: no package reaches into another one's src/. */
const NO_SRC_INTERNALS = {
  regex: '^@tep/[^/]+/src(?:/|$)',
  message:
    "reaches into another package's internals (its src/). Import the package by its public entry point ('@tep/<name>') and export what is missing from its src/index.ts.",
}

/** libs/ and services/: what is deployed depends on nothing simulated and on public entry points only. */
const PRODUCTION_BOUNDARIES = [
  NO_SRC_INTERNALS,
  {
    regex: `^(?:${SIMULATOR_PACKAGES.join('|')})(?:/|$)`,
    message:
      'production code (libs/, services/) must not depend on a simulator package: simulators are test and demo tools, never deployed. Let the caller inject what you need, or move shared code into a library under libs/.',
  },
  {
    regex: '^\\.{1,2}/(?:.*/)?simulators(?:/|$)',
    message:
      'production code (libs/, services/) must not import from simulators/: simulators are test and demo tools, never deployed. Let the caller inject what you need, or move shared code into a library under libs/.',
  },
  {
    regex: '^@tep/[^/]+/(?!src(?:/|$)).+',
    message:
      "imports a subpath of a workspace package. Use its public entry point ('@tep/<name>') only, and export what is missing from its src/index.ts.",
  },
  {
    regex:
      '^(?:\\.\\./){2,}[^./][^/]*/src(?:/|$)|^(?:\\.\\./){3,}(?:libs|services|schemas|deploy|test|scripts)(?:/|$)',
    message:
      "climbs out of this package into another one's files. Depend on that package by name ('@tep/<name>' in package.json) and import its public entry point.",
  },
]

export default tseslint.config(
  { ignores: ['**/node_modules/**', '.cache/**', '.local/**', 'coverage/**', 'bench-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [NO_SRC_INTERNALS] }],
    },
  },
  {
    // Replaces the tree-wide option above for these folders (flat config does not merge rule options).
    files: ['libs/**', 'services/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: PRODUCTION_BOUNDARIES }],
    },
  },
)
