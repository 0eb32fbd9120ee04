// scripts/tree-shake.mjs on small CommonJS packages made for the purpose: what
// it leaves out, what it keeps (the entry point's own effects, lazy requires
// kept lazy, an entry point that reads its own exports), and that it refuses
// an entry point whose use of `module` it does not understand.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';

type TreeShakenEntry = (options: { specifier: string; names: string[]; sideEffectFree: (id: string) => boolean; pure?: string[] }) => Promise<{ code: string; file: string }>;
const modulePath = pathToFileURL(join(ROOT, 'scripts', 'tree-shake.mjs')).href;
const { treeShakenEntry } = (await import(modulePath)) as { treeShakenEntry: TreeShakenEntry };

const work = mkdtempSync(join(tmpdir(), 'aerial-tree-shake-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A package of CommonJS files (name → source) in its own directory; returns its entry point's path. */
function writePackage(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'lib'), { recursive: true });
  for (const [file, source] of Object.entries(files)) writeFileSync(join(dir, file), source);
  return join(dir, 'index.js');
}

/** Loads the tree-shaken module as the bundle would run it: as an ES module, here with no require. */
async function load(code: string, name: string): Promise<Record<string, unknown>> {
  const file = join(work, `${name}.mjs`);
  writeFileSync(file, code);
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

const LIBRARY = {
  'lib/base.js': "'use strict'\nclass Base { ping () { return 'base' } }\nmodule.exports = Base\n",
  'lib/used.js': "'use strict'\nconst Base = require('./base')\nclass Used extends Base { run () { return require('./lazy').value } }\nmodule.exports = Used\n",
  'lib/lazy.js': "'use strict'\nglobalThis.lazyLoads = (globalThis.lazyLoads ?? 0) + 1\nmodule.exports = { value: 'lazy' }\n",
  'lib/unused.js': "'use strict'\nglobalThis.unusedLoaded = true\nmodule.exports = class Unused {}\n",
  'lib/api.js': "'use strict'\nmodule.exports.extra = function extra () { return 'extra' }\n",
  'index.js': [
    "'use strict'",
    "const Base = require('./lib/base')",
    "const Used = require('./lib/used')",
    "const Unused = require('./lib/unused')",
    "const api = require('./lib/api')",
    'Object.assign(Base.prototype, api)',
    'module.exports.Used = Used',
    'module.exports.Unused = Unused',
    'module.exports.self = function self () { return module.exports.self }',
  ].join('\n'),
};

describe('treeShakenEntry', () => {
  const everythingUnderLib = (id: string) => /[\\/]lib[\\/]/.test(id);

  it('keeps what the names need and the entry point’s effects, leaves out the rest, and keeps lazy requires lazy', async () => {
    const entry = writePackage('library', LIBRARY);
    const { code, file } = await treeShakenEntry({ specifier: entry, names: ['Used'], sideEffectFree: everythingUnderLib });
    expect(file).toBe(join(work, 'library', 'tree-shaken.aerial.mjs'));
    expect(code).not.toContain('unusedLoaded');
    const { Used } = await load(code, 'library');
    const used = new (Used as new () => { ping(): string; run(): string; extra(): string })();
    // The entry point's Object.assign onto a prototype survived.
    expect([used.ping(), used.extra()]).toEqual(['base', 'extra']);
    expect((globalThis as { lazyLoads?: number }).lazyLoads).toBeUndefined();
    expect([used.run(), used.run()]).toEqual(['lazy', 'lazy']);
    expect((globalThis as { lazyLoads?: number }).lazyLoads).toBe(1);
    expect((globalThis as { unusedLoaded?: boolean }).unusedLoaded).toBeUndefined();
  });

  it('binds an export the entry point reads back to the value it exported', async () => {
    const entry = writePackage('self-reading', LIBRARY);
    const { code } = await treeShakenEntry({ specifier: entry, names: ['self'], sideEffectFree: everythingUnderLib });
    const { self } = await load(code, 'self-reading');
    expect((self as () => unknown)()).toBe(self);
  });

  it('refuses an entry point that uses module.exports in a way it does not handle, naming the file and the code', async () => {
    const entry = writePackage('replacing', { ...LIBRARY, 'index.js': "'use strict'\nmodule.exports = { a: 1 }\nmodule.exports.read = function () { return module.exports.a }\n" });
    await expect(treeShakenEntry({ specifier: entry, names: ['read'], sideEffectFree: everythingUnderLib })).rejects.toThrow(/replacing[\\/]index\.js: cannot read its own exports here: module\.exports = \{ a: 1 \} \(module\)$/);
  });
});
