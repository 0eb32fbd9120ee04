// `npm pack` and `npm publish` ship package.json as it is. Its `prepare`
// script builds dist/ in a clone (npm ci; npm pack runs it too), but the
// package already holds dist/, and npm warns everyone who installs a package
// with an install-time script. So `prepack` takes `prepare` out of
// package.json for the tarball, and `postpack` puts the file back byte for byte.
//   node scripts/pack-manifest.mjs strip | restore
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const manifest = fileURLToPath(new URL('../package.json', import.meta.url));
const saved = `${manifest}.packing`;

const [step] = process.argv.slice(2);
if (step === 'strip') {
  // A copy left by a pack that died before postpack is the real file: keep it.
  const original = existsSync(saved) ? readFileSync(saved, 'utf8') : readFileSync(manifest, 'utf8');
  writeFileSync(saved, original);
  const packed = JSON.parse(original);
  delete packed.scripts.prepare;
  delete packed.scripts.prepack;
  delete packed.scripts.postpack;
  delete packed.scripts.prepublishOnly;
  writeFileSync(manifest, `${JSON.stringify(packed, null, 2)}\n`);
} else if (step === 'restore') {
  if (existsSync(saved)) renameSync(saved, manifest);
} else {
  throw new Error(`usage: node scripts/pack-manifest.mjs strip|restore (not ${step})`);
}
