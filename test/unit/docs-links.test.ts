// The README and the manual ship in the package (package.json `files`), and
// are read where the package lands: every relative link in them must lead to a
// file of the package, and every #anchor to a heading of the page it names.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { globSync } from 'tinyglobby';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** The files npm packs: package.json `files` (a directory stands for all it holds, `!` excludes), and what npm always adds. */
function packagedFiles(): Set<string> {
  const { files } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  const patterns = files.filter((entry) => !entry.startsWith('!')).flatMap((entry) => [entry, `${entry}/**`]);
  const ignore = files.filter((entry) => entry.startsWith('!')).map((entry) => entry.slice(1));
  const packed = globSync(patterns, { cwd: ROOT, ignore, dot: true, onlyFiles: true });
  return new Set([...packed, 'package.json', 'README.md', 'LICENSE']);
}

const PACKAGED = packagedFiles();
const PAGES = ['README.md', ...globSync('docs/**/*.md', { cwd: ROOT })].sort();

/** The text of a page with its fenced code blocks and code spans blanked out: links there are examples, not links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  page: string;
  target: string;
}

function linksOf(page: string): Link[] {
  const text = prose(readFileSync(join(ROOT, page), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target))
    .map((target) => ({ page, target }));
}

const LINKS = PAGES.flatMap(linksOf);

/** Where a link leads, relative to the repository ('' for the page itself), and its anchor. */
function resolved(link: Link): { path: string; anchor: string | undefined } {
  const [file, anchor] = link.target.split('#') as [string, string | undefined];
  const path = file === '' ? link.page : relative(ROOT, resolve(ROOT, dirname(link.page), decodeURIComponent(file))).split(sep).join('/');
  return { path, anchor };
}

describe('the README and the manual', () => {
  it('are found, and ship in the package', () => {
    expect(PAGES.length).toBeGreaterThan(15);
    expect(PAGES.filter((page) => !PACKAGED.has(page))).toEqual([]);
    expect(LINKS.length).toBeGreaterThan(100);
  });

  it('link only to files of the package, inside it', () => {
    const broken = LINKS.filter((link) => {
      const { path } = resolved(link);
      if (path.startsWith('..')) return true;
      if (PACKAGED.has(path)) return false;
      // A directory: one the package holds files under (docs/ci/).
      const directory = path.replace(/\/$/, '');
      return !(statSync(join(ROOT, directory), { throwIfNoEntry: false })?.isDirectory() && [...PACKAGED].some((file) => file.startsWith(`${directory}/`)));
    });
    expect(broken.map((link) => `${link.page}: ${link.target}`)).toEqual([]);
  });

  it('link to anchors that the pages they name have', () => {
    const withAnchors = LINKS.filter((link) => resolved(link).anchor !== undefined && resolved(link).path.endsWith('.md'));
    expect(withAnchors.length).toBeGreaterThan(10);
    const broken = withAnchors.filter((link) => {
      const { path, anchor } = resolved(link);
      return !anchorsOf(readFileSync(join(ROOT, path), 'utf8')).has(anchor!);
    });
    expect(broken.map((link) => `${link.page}: ${link.target}`)).toEqual([]);
  });

  it('name no path outside the repository', () => {
    const outside = PAGES.filter((page) => /\/work\/shared|\.\.\/(shared|spec)\/|shared\/(spec|design)\//.test(readFileSync(join(ROOT, page), 'utf8')));
    expect(outside).toEqual([]);
  });

  it('make anchors as GitHub does', () => {
    expect([...anchorsOf('# Batch input: what is read, and what is refused\n## Start-up of `--version` and `--help`\n## A\n## A\n')]).toEqual([
      'batch-input-what-is-read-and-what-is-refused',
      'start-up-of---version-and---help',
      'a',
      'a-1',
    ]);
  });
});
