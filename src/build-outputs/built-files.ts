// Files the build writes beside the bundle (scripts/build.mjs): the sandbox's
// world data, the OpenAPI document and the gazetteer of places. The code that reads them runs from dist/,
// from dist/chunks/, from the TypeScript sources (vitest) or from a script a
// test bundled inside the checkout; each finds them in the nearest folder
// above it that has them, itself or its dist/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The path of the build's file `name`, or undefined when there is none (run npm run build). */
export function findBuiltFile(name: string): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    for (const file of [join(dir, name), join(dir, 'dist', name)]) if (existsSync(file)) return file;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
