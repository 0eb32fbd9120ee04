// Names held inside a root (src/files/confined-path.ts): what the MCP server
// and the library's `root` write under. Relative plain names only, no way out
// through `..` or a link, the root made and taken as its real path.
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileError } from '../../../src/api/errors.js';
import { confinedPath, isInside } from '../../../src/files/confined-path.js';
import { tempDir } from '../../helpers/cli.js';

const dir = tempDir('aerial-confined-');
afterAll(() => dir.remove());
const root = join(dir.path, 'root');
const outside = join(dir.path, 'outside');
mkdirSync(join(root, 'sub'), { recursive: true });
mkdirSync(outside);
writeFileSync(join(outside, 'x.jpg'), 'not yours');
writeFileSync(join(root, 'a-file'), '');
symlinkSync(outside, join(root, 'out'));
symlinkSync(join(root, 'sub'), join(root, 'in'));
symlinkSync(join(outside, 'x.jpg'), join(root, 'file-out.jpg'));
symlinkSync(join(root, 'missing-dir'), join(root, 'nowhere'));

async function refusal(name: string, at = root): Promise<FileError> {
  const outcome = await confinedPath(at, name, 'output').then(
    (path) => new Error(`took ${path}`),
    (error: unknown) => error,
  );
  expect(outcome, name).toBeInstanceOf(FileError);
  return outcome as FileError;
}

describe('confinedPath', () => {
  it('takes plain names inside the root, through links that stay inside, and names not there yet', async () => {
    const real = realpathSync(root);
    expect(await confinedPath(root, 'x.jpg', 'output')).toBe(join(real, 'x.jpg'));
    expect(await confinedPath(root, './sub//x.jpg', 'output')).toBe(join(real, 'sub', 'x.jpg'));
    expect(await confinedPath(root, 'new/dirs/x.jpg', 'output')).toBe(join(real, 'new', 'dirs', 'x.jpg'));
    expect(await confinedPath(root, 'in/x.jpg', 'output')).toBe(join(real, 'sub', 'x.jpg'));
    expect(await confinedPath(root, 'ünïcødé ✓.jpg', 'output')).toBe(join(real, 'ünïcødé ✓.jpg'));
  });

  it('makes a root that is missing, and works from its real path', async () => {
    const made = join(dir.path, 'made', 'here');
    expect(await confinedPath(made, 'x.jpg', 'output')).toBe(join(realpathSync(made), 'x.jpg'));
    const linked = join(dir.path, 'root-link');
    symlinkSync(root, linked);
    expect(await confinedPath(linked, 'x.jpg', 'output')).toBe(join(realpathSync(root), 'x.jpg'));
  });

  it('refuses every way out, naming the argument', async () => {
    expect((await refusal('/etc/passwd')).message).toBe('output "/etc/passwd" is an absolute path; name a file inside the output directory');
    expect((await refusal(join(root, 'x.jpg'))).code).toBe('OutsideRoot');
    expect((await refusal('../x.jpg')).message).toBe(`output "../x.jpg" climbs out with '..'; name a file inside the output directory`);
    expect((await refusal('sub/../../root/x.jpg')).code).toBe('OutsideRoot');
    expect((await refusal('out/x.jpg')).message).toBe('output "out/x.jpg" leads out of the output directory through a symbolic link; name a file inside it');
    expect((await refusal('file-out.jpg')).code).toBe('OutsideRoot');
    expect((await refusal('nowhere/x.jpg')).code).toBe('DanglingLink');
    expect((await refusal('a-file/x.jpg')).code).toBe('NotADirectory');
  });

  it('refuses names that are not plain: empty, a directory, controls, separators, direction overrides, backslashes', async () => {
    for (const name of ['', '   ', 'x\n.jpg', 'x\u0085.jpg', 'x\u2028y.jpg', 'gpj.\u202eexe', 'a\u2066b.jpg', 'a\\b.jpg', 'x\u0000.jpg']) {
      expect((await refusal(name)).code, JSON.stringify(name)).toBe('NotAPlainName');
    }
    for (const name of ['sub/', '.', './']) expect((await refusal(name)).code, name).toBe('NotAFile');
  });

  it('leaves a dangling link as the last name to the output checks, which say where it points', async () => {
    expect(await confinedPath(root, 'nowhere', 'output')).toBe(join(realpathSync(root), 'nowhere'));
  });
});

describe('isInside', () => {
  it('is the root or below it, never a sibling with the same start', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/c')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
    expect(isInside('/', '/etc')).toBe(true);
    expect(isInside('/a/b', '/a/b/..c')).toBe(true);
  });
});
