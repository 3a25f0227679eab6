import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  brokenLinks,
  citedMarkdownPaths,
  githubSlug,
  markdownAnchors,
  markdownLinks,
  missingCitedFiles,
} from './markdown-links.ts'

// Every relative link of the repository's Markdown must lead somewhere a reader
// of the repository can follow: an existing file or folder inside it, and, for
// an anchor into a Markdown file, one of that file's headings.
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const README_MAX_LINES = 250

/** Files under `dir` (relative to ROOT) whose name matches, skipping dot folders and node_modules. */
function walk(dir: string, matches: (name: string) => boolean): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name)
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : walk(relative, matches)
    return matches(entry.name) ? [relative] : []
  })
}

/** The files git knows matching `patterns` (tracked, or new and not ignored); without git, every such file of the tree. */
function trackedFiles(patterns: string[], matches: (name: string) => boolean): string[] {
  try {
    const listed = execFileSync(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...patterns],
      { cwd: ROOT, encoding: 'utf8' },
    )
    return listed
      .split('\0')
      .filter(
        (file, index, all) => file !== '' && all.indexOf(file) === index && existsSync(path.join(ROOT, file)),
      )
      .sort()
  } catch {
    return walk('.', matches).sort()
  }
}

const outsideDependencies = (file: string) => !file.split('/').includes('node_modules')
const MARKDOWN = trackedFiles(['*.md'], (name) => name.endsWith('.md')).filter(outsideDependencies)
// Documentation in other formats too: the OpenAPI documents, deployment files, the dashboard.
const DOCUMENTS = trackedFiles(['*.md', '*.yaml', '*.yml', '*.json'], (name) =>
  /\.(?:md|ya?ml|json)$/.test(name),
).filter((file) => outsideDependencies(file) && !file.endsWith('package-lock.json'))

describe('Markdown link parsing', () => {
  it('finds inline links, images and reference definitions outside code, with their lines', () => {
    const markdown = [
      'See [the guide](docs/guide.md#set-up) and ![logo](<img/a b.png> "Logo").',
      '`[not](a-link.md)` in code',
      '```sh',
      '[also not](inside-a-fence.md)',
      '```',
      '[ref]: ../other.md',
    ].join('\n')
    expect(markdownLinks(markdown)).toEqual([
      { line: 1, target: 'docs/guide.md#set-up' },
      { line: 1, target: 'img/a b.png' },
      { line: 6, target: '../other.md' },
    ])
  })

  it('makes anchors the way GitHub does', () => {
    expect(githubSlug('What `npm test` checks here, and what it does not')).toBe(
      'what-npm-test-checks-here-and-what-it-does-not',
    )
    expect(githubSlug('Warm restart from the table checkpoint (`INGEST_STATE_DIR`)')).toBe(
      'warm-restart-from-the-table-checkpoint-ingest_state_dir',
    )
    expect(githubSlug('8. Targets (measured by benchmarks, never asserted by timed tests)')).toBe(
      '8-targets-measured-by-benchmarks-never-asserted-by-timed-tests',
    )
    expect(githubSlug('The shop/merchant table')).toBe('the-shopmerchant-table')
    expect(githubSlug('@tep/bank-sync — consent gateway')).toBe('tepbank-sync--consent-gateway')
    expect([
      ...markdownAnchors('# A\n## Tests\n```\n# not a heading\n```\n## Tests\n<a name="here"></a>'),
    ]).toEqual(['a', 'tests', 'tests-1', 'here'])
  })

  it('reports a missing file, a missing heading and a path outside the repository, with file and line', () => {
    const files: Record<string, string> = {
      [path.join(ROOT, 'docs/fake.md')]:
        'ok [self](#top)\n[gone](missing.md)\n[heading](../README.md#no-such-heading)\n[out](../../elsewhere.md)\n# Top',
      [path.join(ROOT, 'README.md')]: '# Transaction enrichment pipeline',
    }
    expect(brokenLinks(ROOT, 'docs/fake.md', (p) => files[p] ?? readFileSync(p, 'utf8'))).toEqual([
      'docs/fake.md:2: missing.md (no such file or folder: docs/missing.md)',
      'docs/fake.md:3: ../README.md#no-such-heading (no heading with the anchor #no-such-heading in README.md)',
      'docs/fake.md:4: ../../elsewhere.md (outside the repository)',
    ])
  })
})

describe('cited Markdown files', () => {
  it('are found in prose, in paths with and without folders', () => {
    expect(
      citedMarkdownPaths(
        'see `spec/enrichment-service-v5.md` and ../shared/reference/notes.md#x,\nor README.md.',
      ),
    ).toEqual([
      { line: 1, target: 'spec/enrichment-service-v5.md' },
      { line: 1, target: '../shared/reference/notes.md' },
      { line: 2, target: 'README.md' },
    ])
  })
})

describe("the repository's Markdown", () => {
  it('is found (README, docs, every package README)', () => {
    expect(MARKDOWN).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/ARCHITECTURE.md',
        'docs/DECISIONS.md',
        'services/transaction-ingest/README.md',
        'libs/kafka/README.md',
      ]),
    )
    expect(MARKDOWN.length).toBeGreaterThan(30)
  })

  it('has relative links that resolve inside the repository, anchors included', () => {
    expect(MARKDOWN.flatMap((file) => brokenLinks(ROOT, file))).toEqual([])
  })

  it('and its other documents (OpenAPI, deployment files) name only Markdown files the repository has', () => {
    const names = new Set(MARKDOWN.map((file) => path.basename(file)))
    expect(DOCUMENTS.length).toBeGreaterThan(MARKDOWN.length)
    expect(DOCUMENTS.flatMap((file) => missingCitedFiles(ROOT, file, names))).toEqual([])
  })

  it(`keeps README.md under ${README_MAX_LINES} lines (the rest lives in docs/)`, () => {
    const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length - 1
    expect(lines).toBeLessThan(README_MAX_LINES)
  })
})
