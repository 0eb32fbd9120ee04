// Tree-shakes a CommonJS package's public entry point down to the names the
// CLI imports from it, as an ES module esbuild then bundles in its place (see
// scripts/build.mjs). esbuild cannot tree-shake CommonJS: it would bundle, and
// run at start-up, everything the entry point requires. Rollup can, once
// @rollup/plugin-commonjs has turned each file into an ES module.
import commonjs from '@rollup/plugin-commonjs';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import MagicString from 'magic-string';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { rollup } from 'rollup';

const require = createRequire(import.meta.url);
const ENTRY = '\0tree-shaken-entry';
const isBuiltin = (id) => id.startsWith('node:') || builtinModules.includes(id);

/**
 * An ES module that exports `names` from the package `specifier`, holding only
 * the code those names need, plus what the package's entry point itself does
 * as it loads. Returns its code, with an inline source map into the package's own
 * files, and the file it is to be bundled as: one beside the entry point.
 *
 * - Node built-ins stay `require` calls, exactly where the package makes them:
 *   at load or inside a function (lazy), and esbuild resolves them as it
 *   resolves every other require (its build-time stand-ins included).
 * - Files that are required only from inside a function or a condition stay
 *   lazy too (`strictRequires: 'auto'` wraps exactly those in a function run
 *   on the first require); every other file is hoisted, which is what lets
 *   Rollup leave out what nobody uses (wrapped files cannot be tree-shaken).
 * - `sideEffectFree(id)` names the files whose loading does nothing but define
 *   what they export: one of them whose exports go unused is left out whole.
 *   Every other file (the entry point among them) keeps each statement that
 *   has an effect Rollup cannot rule out.
 * - A property read whose value goes unused is dropped: an entry point that
 *   re-exports a member of a file (`require('./x').X`) would otherwise keep the
 *   file for the read alone. That is safe for a package that never reads a
 *   property for its getter's effect (no statement that is only a read).
 * - `pure` names functions and classes whose calls and constructions change
 *   nothing but what they return (Rollup's manualPureFunctions, by name), for
 *   the entry point's exports built by one that Rollup cannot prove so.
 */
export async function treeShakenEntry({ specifier, names, sideEffectFree, pure = [] }) {
  const entryFile = require.resolve(specifier);
  const bundle = await rollup({
    input: ENTRY,
    plugins: [
      {
        name: 'tree-shaken-entry',
        resolveId: (id) => (id === ENTRY ? ENTRY : null),
        load: (id) => (id === ENTRY ? `export { ${names.join(', ')} } from ${JSON.stringify(specifier)};` : null),
      },
      selfReferencesAsBindings(entryFile),
      nodeResolve({ preferBuiltins: true }),
      commonjs({ strictRequires: 'auto', ignore: isBuiltin, sourceMap: true }),
    ],
    treeshake: { moduleSideEffects: (id, external) => !external && !sideEffectFree(id), propertyReadSideEffects: false, manualPureFunctions: pure },
    onwarn(warning) {
      throw new Error(`tree-shaking ${specifier}: ${warning.message}`);
    },
  });
  try {
    // Placed, for its source map's paths and for the requires in it, beside the entry point.
    const file = join(dirname(entryFile), 'tree-shaken.aerial.mjs');
    const { output } = await bundle.generate({ format: 'es', file, sourcemap: 'inline' });
    return { code: output[0].code, file };
  } finally {
    await bundle.close();
  }
}

/**
 * @rollup/plugin-commonjs turns a file that reads its own exports
 * (`module.exports.fetch` inside a function, as undici's entry point does) into
 * one function run as a whole, so nothing in it can be left out. In a file that
 * never replaces `module.exports` and sets each export it reads once, at its top
 * level, such a read is the value set there: this plugin binds that value to a
 * variable and reads the variable, so the file converts export by export. It
 * fails the build on any other use of `module` or `exports` in that file rather
 * than guess. (A top-level write into an export, `module.exports.a.b = x`, is
 * such a read too, and keeps `x` even when `a` goes unused: Rollup cannot drop
 * a write into an object the module exports. undici's SqliteCacheStore class
 * stays in the bundle that way, defined but never used; node:sqlite stays unloaded.)
 */
function selfReferencesAsBindings(file) {
  return {
    name: 'self-references-as-bindings',
    transform(code, id) {
      if (id !== file) return null;
      const ast = this.parse(code);
      let statement;
      /** The error for a use it does not handle, naming the statement around it (its first line). */
      const unexpected = (node) => new Error(`${file}: cannot read its own exports here: ${code.slice(statement.start, statement.end).split('\n')[0]} (${code.slice(node.start, node.end)})`);
      const setAtTop = new Map();
      const reads = [];
      const visit = (node, parent, topLevel) => {
        if (!node || typeof node.type !== 'string') return;
        const name = exportName(node);
        if (name) {
          const assigned = parent?.type === 'AssignmentExpression' && parent.left === node;
          if (!assigned) reads.push({ node, name });
          else if (topLevel && parent.operator === '=' && !setAtTop.has(name)) setAtTop.set(name, parent);
          else if (assigned) setAtTop.set(name, null);
          return;
        }
        if (node.type === 'Identifier' && (node.name === 'module' || node.name === 'exports') && !(parent?.type === 'MemberExpression' && parent.property === node && !parent.computed)) {
          throw unexpected(node);
        }
        for (const [key, value] of Object.entries(node)) {
          if (key === 'type' || key === 'start' || key === 'end') continue;
          for (const child of Array.isArray(value) ? value : [value]) visit(child, node, false);
        }
      };
      for (statement of ast.body) {
        if (statement.type === 'ExpressionStatement' && statement.expression.type === 'AssignmentExpression') {
          visit(statement.expression.left, statement.expression, true);
          visit(statement.expression.right, statement.expression, false);
        } else visit(statement, ast, false);
      }
      if (reads.length === 0) return null;
      const source = new MagicString(code);
      const binding = (name) => `selfExport$${name}`;
      for (const name of new Set(reads.map((read) => read.name))) {
        const assignment = setAtTop.get(name);
        if (!assignment) {
          const read = reads.find((candidate) => candidate.name === name);
          statement = ast.body.find((candidate) => candidate.start <= read.node.start && read.node.end <= candidate.end);
          throw unexpected(read.node);
        }
        if (code.includes(binding(name))) throw new Error(`${file}: already uses the name ${binding(name)}`);
        source.overwrite(assignment.left.start, assignment.right.start, `var ${binding(name)} = `);
        source.appendLeft(assignment.end, `; module.exports.${name} = ${binding(name)}`);
      }
      for (const { node, name } of reads) source.overwrite(node.start, node.end, binding(name));
      return { code: source.toString(), map: source.generateMap({ hires: true }) };
    },
  };
}

/** `N` for the expression `module.exports.N`, otherwise undefined. */
function exportName(node) {
  if (node.type !== 'MemberExpression' || node.computed || node.property.type !== 'Identifier') return undefined;
  const { object } = node;
  const isModuleExports =
    object.type === 'MemberExpression' && !object.computed && object.object.type === 'Identifier' && object.object.name === 'module' && object.property.name === 'exports';
  return isModuleExports ? node.property.name : undefined;
}
