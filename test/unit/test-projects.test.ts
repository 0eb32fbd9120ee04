// Every test file runs in exactly one of the suite's projects (vitest.config.ts):
// a file no project takes would never run, not even in CI, and a file two take
// would run twice. The projects are read from the config itself, and each one's
// include and exclude globs are matched against the files as vitest matches them.
import { glob } from 'tinyglobby';
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.js';
import { ROOT } from '../helpers/cli.js';

const projects = (config.test?.projects ?? []) as TestProjectInlineConfiguration[];

async function filesOf(project: TestProjectInlineConfiguration): Promise<string[]> {
  return glob(project.test?.include ?? [], { cwd: ROOT, ignore: [...(project.test?.exclude ?? []), '**/node_modules/**'] });
}

describe('the test projects', () => {
  it('are unit, e2e and heavy, each an inline project named and with its own include', () => {
    expect(projects.map((project) => project.test?.name)).toEqual(['unit', 'e2e', 'heavy']);
    for (const project of projects) expect(project.test?.include?.length).toBeGreaterThan(0);
  });

  it('take every test file under test/ exactly once', async () => {
    const everyFile = await glob('test/**/*.test.ts', { cwd: ROOT });
    expect(everyFile.length).toBeGreaterThan(100);
    const takenBy = new Map<string, string[]>(everyFile.map((file) => [file, []]));
    for (const project of projects) {
      for (const file of await filesOf(project)) {
        // A project's glob reaching a file outside test/**/*.test.ts still counts against it.
        takenBy.set(file, [...(takenBy.get(file) ?? []), project.test!.name as string]);
      }
    }
    const wrong = [...takenBy].filter(([, names]) => names.length !== 1).map(([file, names]) => `${file}: ${names.length === 0 ? 'no project' : names.join(', ')}`);
    expect(wrong, `each file must be in exactly one project (vitest.config.ts)`).toEqual([]);
  });
});
