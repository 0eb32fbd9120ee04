// The bundle in dist/ carries code from the npm packages it was built from,
// and their licences ask that their notices travel with it. This lists each
// package esbuild put into the bundle (from its metafile) with its licence
// text, for dist/THIRD-PARTY-NOTICES.md. sharp is not bundled: npm installs it
// with its own notices.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The package directory holding `file`, or undefined for the project's own files. */
function packageDirOf(file) {
  const parts = resolve(file).split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const scoped = parts[at + 1]?.startsWith('@');
  return parts.slice(0, at + (scoped ? 3 : 2)).join('/');
}

function licenceText(dir) {
  const name = readdirSync(dir).find((file) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(file));
  return name ? readFileSync(join(dir, name), 'utf8').trim() : undefined;
}

/**
 * Markdown naming every bundled package, its version and licence, with the
 * licence's text; then the packages whose data the build made files of (`data`,
 * package names), with theirs.
 */
export function thirdPartyNotices(metafile, root, data = []) {
  const dirs = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const dir = packageDirOf(join(root, input.replace(/^[a-z-]+:/, '')));
    if (dir && existsSync(join(dir, 'package.json'))) dirs.add(dir);
  }
  const packages = [...dirs]
    .map((dir) => {
      const { name, version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      return { name, version, license, text: licenceText(dir) ?? licenceText(dirname(dir)) };
    })
    // The same version installed in two places is one package.
    .filter((pkg, index, all) => all.findIndex((other) => other.name === pkg.name && other.version === pkg.version) === index)
    .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
  const section = ({ name, version, license, text }) => `## ${name} ${version} (${license ?? 'see below'})\n\n${text ?? 'No licence file is shipped with this package.'}\n`;
  const dataPackages = data.map((name) => {
    const dir = join(root, 'node_modules', name);
    const { version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    return { name, version, license, text: licenceText(dir) };
  });
  const dataPart = dataPackages.length
    ? `\n# Data\n\nThe place names, positions and populations of dist/gazetteer.tsv.gz (aerial's places by name) and dist/sandbox-world.bin come from [GeoNames](https://www.geonames.org) (CC BY 4.0: © GeoNames contributors), through these npm packages.\n\n${dataPackages.map(section).join('\n')}`
    : '';
  return `# Third-party notices\n\naerial's bundle (dist/) includes code from these npm packages.\n\n${packages.map(section).join('\n')}${dataPart}`;
}
