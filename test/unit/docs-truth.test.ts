import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, markdownFiles, SKIPPED_FOLDERS, withoutCode } from '../support/markdown-links';

// The code and the documents cite what is in the repository: no citation of
// SPEC.md, a contract kept outside the repository (docs/api.md is the repository's); every
// `docs/api.md#anchor` (or other Markdown file of the repository) cited in the code names an anchor
// that file has; and the design and the README do not list as planned what the code already does.

const root = process.cwd();
const SELF = 'test/unit/docs-truth.test.ts';

/** Files whose text quotes citations as test data rather than making them, with the reason. */
const FIXTURES: Record<string, string> = {
  [SELF]: 'states these rules and the counter-examples that show they can fail',
  'test/unit/markdown-links.test.ts': "the link checker's own cases: the README's old links and deliberately broken ones",
};

/** Tool output that copies the sources (mutation sandboxes, reports) is not the repository's text. */
const SKIPPED = new Set([...SKIPPED_FOLDERS, '.stryker-tmp', 'reports', 'coverage']);
const CODE_FILE = /\.[cm]?[jt]s$/;

/** Every code and Markdown file under `root` (posix paths relative to it), outside SKIPPED. */
function repositoryFiles(folder = ''): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : repositoryFiles(path);
    return entry.isFile() && (CODE_FILE.test(entry.name) || entry.name.toLowerCase().endsWith('.md')) ? [path] : [];
  }).sort();
}

/** A finding: where, and what is wrong. */
type Finding = string;

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/**
 * (a) Citations of the absent contract: the word `SPEC` in capitals, as in `SPEC.md §2.2`, "SPEC
 * order" or "the SPEC fields". The file is not in the repository, so no reader can follow them.
 */
function absentContractCitations(file: string, text: string): Finding[] {
  return [...text.matchAll(/\bSPEC\b(?:\.md)?(?:\s*§[\d.]+)?/g)]
    .map((match) => `${file}:${lineOf(text, match.index)}: cites ${match[0]}, which is not in the repository (cite docs/api.md#…)`);
}

/**
 * (b) Citations `path/to/file.md#anchor` in code, where the path names a Markdown file of the
 * repository (from its root): the anchor must be one that file defines (a GitHub heading slug or
 * an explicit `<a id>`), compared exactly, as a browser does.
 */
function brokenAnchorCitations(file: string, text: string, markdown: (path: string) => string | undefined): Finding[] {
  return [...text.matchAll(/(?<![\w/.#-])((?:[\w.-]+\/)*[\w.-]+\.md)#([\w-]+)/g)].flatMap((match) => {
    const [citation, path, anchor] = match as unknown as [string, string, string];
    const target = markdown(path);
    if (target === undefined || anchorsOf(target).has(anchor)) return [];
    return [`${file}:${lineOf(text, match.index)}: cites ${citation}, but ${path} has no anchor #${anchor}`];
  });
}

/**
 * (c) Work announced as not done: a label "Planned", "Future work", "Not done yet", "To do" or
 * "TODO" (capitalised, as labels are) opening a heading, a list item or a paragraph and followed by
 * `:`, `,`, `(` or the end of the line; or "not done yet", "not (yet) implemented", "(planned)",
 * "coming soon", "TODO" anywhere. Code is left out, so identifiers such as
 * `PLANNED_MONTHLY_ACTIVE_USERS` do not count, nor capacity "planned for 250,000 users", nor "to do
 * so" at the start of a wrapped line.
 */
function announcedWork(file: string, markdown: string): Finding[] {
  const rules = [
    /^ {0,3}(?:#{1,6}[ \t]+|[-*+][ \t]+|\d+[.)][ \t]+|>[ \t]*)?[*_]{0,2}(?:Planned|Future work|Not done yet|To do|TODO)[*_]{0,2}[ \t]*(?:[:,(]|$)/,
    /\bnot (?:done|implemented|built|supported|available) yet\b/i,
    /\bnot yet (?:done|implemented|built|supported|available)\b/i,
    /\(planned\)/i,
    /\bcoming soon\b/i,
    /\bTODO\b/,
  ];
  return withoutCode(markdown).split('\n').flatMap((line, i) =>
    rules.some((rule) => rule.test(line)) ? [`${file}:${i + 1}: announces work as not done: ${line.trim()}`] : []);
}

describe('what the code and the documents cite', () => {
  const files = repositoryFiles();
  const checked = files.filter((file) => !Object.hasOwn(FIXTURES, file));
  const read = (file: string) => readFileSync(join(root, file), 'utf8');
  const documents = new Set(markdownFiles(root));
  const markdown = (path: string) => (documents.has(path) ? read(path) : undefined);

  it('reads the code and the documents of the repository, and only those', () => {
    expect(files).toEqual(expect.arrayContaining([SELF, 'shared/domain/device.ts', 'functions/auth/post-token.ts', 'README.md', 'docs/design.md', 'stryker.config.mjs']));
    expect(files.filter((file) => /(^|\/)(node_modules|\.git|cdk\.out|\.local|\.stryker-tmp)\//.test(file))).toEqual([]);
    // Each exemption names a file that exists, so that none outlives its reason.
    expect(Object.keys(FIXTURES).filter((file) => !files.includes(file))).toEqual([]);
  });

  it('(a) never cite the contract that is not in the repository', () => {
    expect(checked.flatMap((file) => absentContractCitations(file, read(file)))).toEqual([]);
  });

  it('(b) cite only anchors that the cited Markdown file has', () => {
    const code = checked.filter((file) => CODE_FILE.test(file));
    expect(code.flatMap((file) => brokenAnchorCitations(file, read(file), markdown))).toEqual([]);
    // Not vacuous: the code cites the interface contract, section by section.
    const cited = code.flatMap((file) => [...read(file).matchAll(/\bdocs\/api\.md#([\w-]+)/g)].map((match) => match[1]!));
    expect(cited.length).toBeGreaterThanOrEqual(20);
    expect([...new Set(cited)]).toEqual(expect.arrayContaining(['user', 'device', 'token-response', 'token-errors', 'limits']));
  });

  it('(c) do not list as planned what the design or the README describes as done', () => {
    expect(['README.md', 'docs/design.md'].flatMap((file) => announcedWork(file, read(file)))).toEqual([]);
  });
});

describe('the rules can fail', () => {
  it('(a) finds the old citations, and not words that merely contain the letters', () => {
    const code = ['/** A device as SPEC.md §2.2 shows it. */', "it('keeps the fields, in SPEC order', () => {});", '// TimeToLiveSpecification, a SPECIAL case, the spec of RFC 9068'].join('\n');
    expect(absentContractCitations('shared/x.ts', code)).toEqual([
      'shared/x.ts:1: cites SPEC.md §2.2, which is not in the repository (cite docs/api.md#…)',
      'shared/x.ts:2: cites SPEC, which is not in the repository (cite docs/api.md#…)',
    ]);
  });

  it('(b) finds an anchor the file lacks, and accepts slugs and explicit ids', () => {
    const api = '# API\n\n## Token request: refresh\n\n<a id="token-errors"></a>\n\n### Errors\n';
    const markdown = (path: string) => (path === 'docs/api.md' ? api : undefined);
    const code = [
      '// docs/api.md#token-request-refresh, docs/api.md#token-errors and docs/api.md#errors are there;',
      '// docs/api.md#token-response is not, nor docs/api.md#Errors (anchors are exact), nor docs/api.md#limits.',
      '// Not citations of a repository file: https://example.com/docs/api.md#limits, other/file.md#x, #shared/x.',
    ].join('\n');
    expect(brokenAnchorCitations('shared/x.ts', code, markdown)).toEqual([
      'shared/x.ts:2: cites docs/api.md#token-response, but docs/api.md has no anchor #token-response',
      'shared/x.ts:2: cites docs/api.md#Errors, but docs/api.md has no anchor #Errors',
      'shared/x.ts:2: cites docs/api.md#limits, but docs/api.md has no anchor #limits',
    ]);
  });

  it('(c) finds the design\'s old "planned" list, and not capacity planning or code', () => {
    const design = [
      '## What changed since the first design',
      '',
      'Planned, not done yet:',
      '',
      '- Rotating a client secret keeps the old one valid until the developer retires it.',
      '- TODO: publish the key.',
      '## Planned',
      'Per-client quotas are not implemented yet; webhooks (planned).',
      '**Future work**: quotas.',
      'Each route has a throttle',
      'planned for 250,000 monthly active users, at the planned load, from `PLANNED_MONTHLY_ACTIVE_USERS`;',
      'to do so, codes not yet exchanged are revoked; a token not yet valid is refused.',
      '```',
      'Planned inside a fence is an example.',
      '```',
    ].join('\n');
    expect(announcedWork('docs/design.md', design).map((finding) => finding.split(':')[1])).toEqual(['3', '6', '7', '8', '9']);
  });
});
