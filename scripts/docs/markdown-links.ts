import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'

/** A link found in a Markdown file: its target as written and the 1-based line it is on. */
export interface MarkdownLink {
  line: number
  target: string
}

/** Lines of `markdown` with fenced code blocks blanked out (line numbers kept). */
function proseLines(markdown: string): string[] {
  let fence: string | undefined
  return markdown.split('\n').map((line) => {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(line)
    if (fence === undefined) {
      if (opener) {
        fence = opener[1]!
        return ''
      }
      return line
    }
    if (
      opener &&
      opener[1]![0] === fence[0] &&
      opener[1]!.length >= fence.length &&
      line.trim() === opener[1]
    )
      fence = undefined
    return ''
  })
}

/** `line` without its inline code spans (`` `...` ``), which never hold links. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length))
}

/**
 * Inline links and images (`[text](target "title")`, `![alt](<target>)`) and
 * reference definitions (`[id]: target`) outside code, with their line numbers.
 */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = []
  proseLines(markdown).forEach((raw, index) => {
    const line = withoutCodeSpans(raw)
    for (const match of line.matchAll(
      /\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g,
    )) {
      links.push({ line: index + 1, target: match[1]!.replace(/^<|>$/g, '') })
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line)
    if (definition) links.push({ line: index + 1, target: definition[1]!.replace(/^<|>$/g, '') })
  })
  return links
}

/**
 * GitHub's anchor for a heading's text: the rendered text (code spans and links
 * reduced to their text, emphasis markers dropped) in lower case, punctuation
 * removed, spaces turned into hyphens.
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a Markdown file offers: its headings' slugs (repeats get -1, -2 ...) and explicit `id`/`name` anchors. */
export function markdownAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)
    if (heading) {
      const slug = githubSlug(heading[1]!)
      const count = seen.get(slug) ?? 0
      seen.set(slug, count + 1)
      anchors.add(count === 0 ? slug : `${slug}-${count}`)
    }
    for (const html of line.matchAll(/<a\s[^>]*(?:name|id)="([^"]+)"/g)) anchors.add(html[1]!)
  }
  return anchors
}

/** True for targets that leave the repository by design: URLs with a scheme, protocol-relative URLs. */
function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')
}

/**
 * What is wrong with each relative link of the Markdown file `file` (a path
 * relative to `root`): a target outside the repository, a missing file or
 * folder, or an anchor that is no heading of the target Markdown file.
 * One line per problem, `file:line: target (reason)`.
 */
export function brokenLinks(
  root: string,
  file: string,
  readMarkdown: (absolute: string) => string = (p) => readFileSync(p, 'utf8'),
): string[] {
  const absolute = path.join(root, file)
  const markdown = readMarkdown(absolute)
  const problems: string[] = []
  for (const { line, target } of markdownLinks(markdown)) {
    if (target === '' || isExternal(target)) continue
    const hashAt = target.indexOf('#')
    const pathPart = hashAt === -1 ? target : target.slice(0, hashAt)
    const anchor = hashAt === -1 ? undefined : decodeURIComponent(target.slice(hashAt + 1))
    const where = `${file}:${line}: ${target}`
    let decoded: string
    try {
      decoded = decodeURIComponent(pathPart.replace(/\?.*$/, ''))
    } catch {
      problems.push(`${where} (not a valid URL path)`)
      continue
    }
    const resolved =
      decoded === ''
        ? absolute
        : decoded.startsWith('/')
          ? path.join(root, decoded)
          : path.resolve(path.dirname(absolute), decoded)
    const inside = path.relative(root, resolved)
    if (inside.startsWith('..') || path.isAbsolute(inside)) {
      problems.push(`${where} (outside the repository)`)
      continue
    }
    if (decoded !== '' && !existsSync(resolved)) {
      problems.push(`${where} (no such file or folder: ${inside})`)
      continue
    }
    if (
      anchor === undefined ||
      anchor === '' ||
      !resolved.endsWith('.md') ||
      (decoded !== '' && statSync(resolved).isDirectory())
    )
      continue
    if (!markdownAnchors(decoded === '' ? markdown : readMarkdown(resolved)).has(anchor))
      problems.push(`${where} (no heading with the anchor #${anchor} in ${inside})`)
  }
  return problems
}

/** Paths of Markdown files named anywhere in `text` (`docs/x.md`, `../README.md`, `notes.md#part`), with their lines. */
export function citedMarkdownPaths(text: string): MarkdownLink[] {
  const cited: MarkdownLink[] = []
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(/(?<![\w/.-])((?:\.{1,2}\/)*(?:[\w@.-]+\/)*[\w.-]+\.md)(?![\w/])/g)) {
      cited.push({ line: index + 1, target: match[1]! })
    }
  })
  return cited
}

/**
 * Markdown files that `file` (Markdown, YAML or JSON, relative to `root`) names but
 * the repository does not have: a path with a folder must resolve from the file's
 * folder or from the root; a bare name must be the name of one of `knownNames`.
 */
export function missingCitedFiles(root: string, file: string, knownNames: ReadonlySet<string>): string[] {
  const text = readFileSync(path.join(root, file), 'utf8')
  return citedMarkdownPaths(text)
    .filter(({ target }) => {
      if (!target.includes('/')) return !knownNames.has(target)
      const fromFile = path.resolve(root, path.dirname(file), target)
      const fromRoot = path.resolve(root, target)
      const inside = (p: string) => !path.relative(root, p).startsWith('..')
      return !((inside(fromFile) && existsSync(fromFile)) || (inside(fromRoot) && existsSync(fromRoot)))
    })
    .map(({ line, target }) => `${file}:${line}: ${target} (not in the repository)`)
}
