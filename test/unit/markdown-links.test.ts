import { describe, expect, it } from 'vitest';
import {
  anchorsOf, brokenLinks, diskView, extractLinks, githubSlug, markdownFiles, type FileView,
} from '../support/markdown-links';

/** A repository held in memory: file paths (posix, from the root) and their text; folders implied. */
function memoryView(files: Record<string, string>): FileView {
  return {
    kind: (path) => {
      if (Object.hasOwn(files, path)) return 'file';
      return path === '.' || Object.keys(files).some((file) => file.startsWith(`${path}/`)) ? 'folder' : undefined;
    },
    read: (path) => {
      if (!Object.hasOwn(files, path)) throw new Error(`no file ${path}`);
      return files[path]!;
    },
  };
}

describe('Markdown links of the repository', () => {
  const root = process.cwd();
  const files = markdownFiles(root);

  it('finds every Markdown file, outside dependencies and build output', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/design.md', 'shared/data/ACCESS-PATTERNS.md', 'bench/RESULTS.md']));
    expect(files.filter((file) => /(^|\/)(node_modules|cdk\.out|\.local|\.git)\//.test(file))).toEqual([]);
  });

  it('resolve inside the repository, to files and headings that exist', () => {
    const view = diskView(root);
    const broken = files.flatMap((file) => brokenLinks(view, file));
    expect(broken.map(({ file, line, target, problem }) => `${file}:${line} (${target}): ${problem}`)).toEqual([]);
    // Not vacuous: the documents link to one another and into the code.
    expect(files.reduce((count, file) => count + extractLinks(view.read(file)).length, 0)).toBeGreaterThan(40);
  });

  it('include the README links to the contract and the design decisions held in docs/', () => {
    const targets = extractLinks(diskView(root).read('README.md')).map((link) => link.target);
    expect(targets).toEqual(expect.arrayContaining(['docs/api.md', 'docs/design.md']));
  });
});

describe('extractLinks', () => {
  it('reads inline links, images, titles, angle brackets, reference definitions and HTML', () => {
    const markdown = [
      'See [the API](docs/api.md) and ![a logo](img/logo.png "Logo").',
      'A [nested [bracket] text](a/b.md#part) and [spaced](<docs/with space.md>).',
      '[id]: shared/data/ACCESS-PATTERNS.md "Patterns"',
      '<a href="bench/RESULTS.md">results</a> <img src="img/x.svg">',
      'A [paren](docs/f(1).md) and [`code` text](infra/routes.ts).',
    ].join('\n');
    expect(extractLinks(markdown)).toEqual([
      { target: 'docs/api.md', line: 1 },
      { target: 'img/logo.png', line: 1 },
      { target: 'a/b.md#part', line: 2 },
      { target: 'docs/with space.md', line: 2 },
      { target: 'shared/data/ACCESS-PATTERNS.md', line: 3 },
      { target: 'bench/RESULTS.md', line: 4 },
      { target: 'img/x.svg', line: 4 },
      { target: 'docs/f(1).md', line: 5 },
      { target: 'infra/routes.ts', line: 5 },
    ]);
  });

  it('ignores links inside fenced code blocks and code spans', () => {
    const markdown = ['```md', '[in a fence](../outside.md)', '```', 'Text `[in a span](../outside.md)` and [real](x.md).', '~~~', '[x]: ../y', '~~~'].join('\n');
    expect(extractLinks(markdown)).toEqual([{ target: 'x.md', line: 4 }]);
  });
});

describe('githubSlug and anchorsOf', () => {
  it('make anchors as GitHub does', () => {
    expect(githubSlug('Behaviour worth knowing')).toBe('behaviour-worth-knowing');
    expect(githubSlug('The OAuth 2.0 flow, end to end')).toBe('the-oauth-20-flow-end-to-end');
    expect(githubSlug('`GET /devices/{device_id}`')).toBe('get-devicesdevice_id');
    expect(githubSlug('What is proven, and what is not?')).toBe('what-is-proven-and-what-is-not');
    expect(githubSlug('Errors — one envelope')).toBe('errors--one-envelope');
    expect(githubSlug('[Linked](x.md) *heading*')).toBe('linked-heading');
  });

  it('numbers repeated headings and ignores # lines inside code', () => {
    const markdown = ['# Title', '## Errors', '```sh', '# not a heading', '```', '## Errors', 'Setext', '------', '<a id="custom"></a>'].join('\n');
    expect([...anchorsOf(markdown)].sort()).toEqual(['custom', 'errors', 'errors-1', 'setext', 'title']);
  });
});

describe('brokenLinks', () => {
  const view = memoryView({
    'README.md': '',
    'docs/api.md': '# API\n\n## Errors\n\nSee [limits](#limits).\n',
    'infra/routes.ts': '',
  });
  const check = (markdown: string, file = 'README.md') =>
    brokenLinks({ ...view, read: (path) => (path === file ? markdown : view.read(path)) }, file).map((b) => b.problem);

  it("refuses the README's old links to files outside the repository", () => {
    const readme = 'The contract is [`SPEC.md`](../shared/SPEC.md); the decisions are in [`DESIGN.md`](../shared/DESIGN.md).';
    expect(check(readme)).toEqual(['leads outside the repository', 'leads outside the repository']);
  });

  it('refuses missing files, missing headings, local state and odd schemes', () => {
    expect(check('[a](docs/nope.md) [b](docs/api.md#nope) [c](.local/service.json) [d](file:///etc/passwd) [e]()')).toEqual([
      'docs/nope.md does not exist',
      'docs/api.md has no heading #nope',
      'names .local/service.json, which is not part of the repository',
      'not a web address nor a path in the repository',
      'empty link',
    ]);
    expect(check('[same file](#limits)', 'docs/api.md')).toEqual(['docs/api.md has no heading #limits']);
  });

  it('accepts files, folders, headings, root-relative paths and web links', () => {
    expect(check([
      '[a](docs/api.md) [b](docs/api.md#errors) [c](docs/) [d](infra/routes.ts#L10) [e](/docs/api.md#API)',
      '[f](https://example.com/x) [g](mailto:a@example.com) [h](docs/api%2Emd)',
    ].join('\n'))).toEqual([]);
    expect(check('# API\n## Errors\n[up and back](../README.md) [self](#errors)', 'docs/api.md')).toEqual([]);
  });
});
