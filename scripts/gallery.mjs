// Makes the gallery of docs/sandbox.md: the same scene at six places, and the
// request's flags on and off at one of them, each generated with the CLI
// against its in-process sandbox (as a user would) and shrunk to a thumbnail.
//
//   npm run build && node scripts/gallery.mjs      writes docs/gallery/*.jpg
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'docs', 'gallery');
const THUMBNAIL_WIDTH = 640;

/** One look for every place: a wide, oblique view on a clear day. */
const SCENE = ['--resolution', 'HD', '--zoom', 'Low', '--angle', 'High', '--bearing', 'North', '--weather', 'Sunny', '--daytime', 'Day'];
const LIBERTY = ['--at', '40.6892,-74.0445'];

const PICTURES = [
  ['place-liberty-island', [...LIBERTY]],
  ['place-manhattan', ['--at', '40.754,-73.984']],
  ['place-paris', ['--at', '48.8584,2.2945']],
  ['place-sahara', ['--at', '23.4,11.5']],
  ['place-greenland', ['--at', '72,-40']],
  ['place-atlantic', ['--at', '0,-30']],
  ['flag-none', [...LIBERTY]],
  ['flag-include-context', [...LIBERTY, '--include-context']],
  ['flag-no-include-surroundings', [...LIBERTY, '--no-include-surroundings']],
  ['flag-improve-output', [...LIBERTY, '--improve-output']],
  ['flag-prompt-and-tags', [...LIBERTY, '--prompt', 'make it purple with dragons', '--tag', 'harbour', '--tag', 'demo']],
];

const work = mkdtempSync(join(tmpdir(), 'aerial-gallery-'));
try {
  mkdirSync(OUT, { recursive: true });
  for (const [name, args] of PICTURES) {
    const full = join(work, `${name}.jpg`);
    execFileSync(process.execPath, [join(ROOT, 'bin', 'aerial.js'), 'generate', '--sandbox', ...SCENE, ...args, '--no-metadata', '-o', full], {
      env: { ...process.env, AERIAL_CONFIG_DIR: join(work, 'config') },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await sharp(full).resize(THUMBNAIL_WIDTH).jpeg({ quality: 82 }).toFile(join(OUT, `${name}.jpg`));
    process.stdout.write(`docs/gallery/${name}.jpg\n`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
