import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';

// Relative links of the repository's Markdown files, checked the way GitHub renders them: a link
// resolves against its file's folder (a leading `/` against the repository root), must stay inside
// the repository and name something the repository holds; `file.md#anchor` must name a heading.

/** Folders that hold no documentation of the repository: dependencies, build output, local state. */
export const SKIPPED_FOLDERS = new Set(['node_modules', '.git', 'cdk.out', '.local', 'test-artifacts', '.out']);

/** One link or image reference as written in a Markdown file. */
export interface MarkdownLink {
  /** The destination as written (angle brackets and title removed). */
  target: string;
  /** 1-based line of the file where the link starts. */
  line: number;
}

/** A file system view, so that the checker can be tested on files that exist only in memory. */
export interface FileView {
  /** 'file', 'folder' or undefined (absent), for a path relative to the repository root (posix). */
  kind(path: string): 'file' | 'folder' | undefined;
  read(path: string): string;
}

/** The repository as the checker sees it, rooted at `root`. */
export function diskView(root: string): FileView {
  return {
    kind: (path) => {
      const full = join(root, path);
      if (!existsSync(full)) return undefined;
      return statSync(full).isDirectory() ? 'folder' : 'file';
    },
    read: (path) => readFileSync(join(root, path), 'utf8'),
  };
}

/** Every Markdown file under `root` (posix paths relative to it), outside SKIPPED_FOLDERS. */
export function markdownFiles(root: string, folder = ''): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    const path = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name)) files.push(...markdownFiles(root, path));
    } else if (entry.isFile() && entry.name.toLowerCase().endsWith('.md')) {
      files.push(path);
    }
  }
  return files.sort();
}

/**
 * Fenced code blocks and inline code spans hold examples, not links: each is blanked to spaces
 * (line breaks kept, so line numbers stay right).
 */
export function withoutCode(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  const kept = lines.map((line) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined) {
      if (opening) {
        fence = opening;
        return '';
      }
      return line;
    }
    if (opening && opening[0] === fence[0] && opening.length >= fence.length && /^ {0,3}[`~]+\s*$/.test(line)) fence = undefined;
    return '';
  }).join('\n');
  // Inline code spans (backtick runs of equal length), possibly across a line break but not a blank line.
  return kept.replace(/(?<!`)(`+)((?:(?!\n[ \t]*\n)[\s\S])*?[^`])\1(?!`)/g, (span) => span.replace(/[^\n]/g, ' '));
}

const INLINE = /!?\[(?:[^[\]\\]|\\.|\[(?:[^[\]\\]|\\.)*\])*\]\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)/g;
const DEFINITION = /^ {0,3}\[((?:[^[\]\\]|\\.)+)\]:[ \t]*(<[^<>\n]*>|\S+)/gm;
const HTML_ATTRIBUTE = /<(?:a|img)\b[^>]*?\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi;

/**
 * The link and image destinations of a Markdown text: inline `[text](path "title")` and
 * `![alt](path)`, reference definitions `[id]: path`, and `<a href>` / `<img src>`; none inside code.
 */
export function extractLinks(markdown: string): MarkdownLink[] {
  const text = withoutCode(markdown);
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  const links: MarkdownLink[] = [];
  const add = (raw: string, index: number) => {
    const target = raw.startsWith('<') && raw.endsWith('>') ? raw.slice(1, -1) : raw;
    links.push({ target: target.replace(/\\(.)/g, '$1'), line: lineOf(index) });
  };
  for (const match of text.matchAll(INLINE)) add(match[1]!, match.index);
  for (const match of text.matchAll(DEFINITION)) add(match[2]!, match.index);
  for (const match of text.matchAll(HTML_ATTRIBUTE)) add(match[1] ?? match[2]!, match.index);
  return links.sort((a, b) => a.line - b.line);
}

/**
 * The anchor GitHub gives a heading: its text lower-cased, every character that is not a letter,
 * digit, mark, connector (`_`), space or hyphen removed, spaces turned into hyphens. Markdown
 * syntax is rendered first (code ticks, emphasis, links keep only their text).
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[((?:[^[\]]|\[[^\]]*\])*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .replace(/(^|\s)_+|_+(?=\s|$)/g, '$1');
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;

/** The anchors a Markdown file defines: its headings' slugs (repeats get -1, -2, …) and HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  const lines = withoutCode(markdown).split('\n');
  const original = markdown.split('\n');
  lines.forEach((line, i) => {
    // A heading is recognised outside code, and its text read from the original line (code spans keep their text).
    const atx = ATX_HEADING.test(line) ? ATX_HEADING.exec(original[i]!) : null;
    const setext = i + 1 < lines.length && /^ {0,3}(=+|-+)[ \t]*$/.test(lines[i + 1]!) && line.trim() !== ''
      && !/^ {0,3}([-*_+>|]|\d+\.)/.test(line);
    const text = atx ? atx[1] ?? '' : setext ? original[i]! : undefined;
    if (text !== undefined) {
      const slug = githubSlug(text);
      const seen = counts.get(slug) ?? 0;
      counts.set(slug, seen + 1);
      anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
    }
    for (const match of line.matchAll(/<[a-z][^>]*?\s(?:id|name)\s*=\s*["']([^"']+)["']/gi)) anchors.add(match[1]!);
  });
  return anchors;
}

/** A link that does not resolve, with the reason. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  problem: string;
}

const EXTERNAL = /^(https?:|mailto:)/i;

/**
 * Checks every relative link of `file` (a posix path relative to the repository root). External
 * links (http, https, mailto) are not followed; any other scheme is refused, as nothing in the
 * repository could answer it.
 */
export function brokenLinks(view: FileView, file: string): BrokenLink[] {
  const markdown = view.read(file);
  const problems: BrokenLink[] = [];
  for (const { target, line } of extractLinks(markdown)) {
    const problem = linkProblem(view, file, markdown, target);
    if (problem) problems.push({ file, line, target, problem });
  }
  return problems;
}

function linkProblem(view: FileView, file: string, markdown: string, target: string): string | undefined {
  if (EXTERNAL.test(target)) return undefined;
  if (target === '') return 'empty link';
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return 'not a web address nor a path in the repository';
  const hashAt = target.indexOf('#');
  const pathPart = (hashAt < 0 ? target : target.slice(0, hashAt)).replace(/\?.*$/, '');
  const anchor = hashAt < 0 ? undefined : target.slice(hashAt + 1);
  let path: string;
  try {
    path = decodeURIComponent(pathPart);
  } catch {
    return 'badly percent-encoded path';
  }

  let resolved = file;
  if (path !== '') {
    const joined = path.startsWith('/') ? posix.normalize(path.slice(1)) : posix.join(posix.dirname(file), path);
    if (joined === '..' || joined.startsWith('../') || isAbsolute(joined)) return 'leads outside the repository';
    resolved = joined.replace(/\/+$/, '') || '.';
    if (resolved.split('/').some((segment) => SKIPPED_FOLDERS.has(segment))) return `names ${resolved}, which is not part of the repository`;
    if (view.kind(resolved) === undefined) return `${resolved} does not exist`;
  }
  if (anchor === undefined || anchor === '' || !resolved.toLowerCase().endsWith('.md') || view.kind(resolved) !== 'file') return undefined;
  const anchors = resolved === file ? anchorsOf(markdown) : anchorsOf(view.read(resolved));
  let wanted: string;
  try {
    wanted = decodeURIComponent(anchor).toLowerCase();
  } catch {
    return 'badly percent-encoded anchor';
  }
  return anchors.has(wanted) ? undefined : `${resolved} has no heading #${anchor}`;
}
