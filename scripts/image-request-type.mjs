// The library's ImageRequest type, written from the scene vocabulary with a
// doc comment on every field (its help, its values, its default), so an editor
// shows them on hover: a mapped type over the vocabulary would carry none.
// test/unit/library/image-request.test.ts holds src/library/image-request.ts to
// what this makes (`-u` writes it again after a change to the vocabulary), and
// holds the type to the vocabulary's own.

const HEADER = `// Generated from the scene vocabulary (src/scene/vocabulary.ts) by
// scripts/image-request-type.mjs: do not edit. After a change to the
// vocabulary, \`npx vitest run test/unit/library/image-request.test.ts -u\`
// writes it again; that test fails while it differs.
`;

/** A field's help as a sentence: no remarks only the command line needs, the first letter capital. */
function sentence(help) {
  const text = help.replace(/\s*\([^)]*\)$/, '').replace(/, repeatable$/, '');
  return `${text[0].toUpperCase()}${text.slice(1)}`;
}

const quoted = (values) => values.map((value) => `'${value}'`);
const listed = (values) => (values.length === 1 ? values[0] : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`);

/** One field's doc comment and declaration, indented by `indent`. */
function member(name, doc, type, optional, indent) {
  return `${indent}/** ${doc} */\n${indent}${name}${optional ? '?' : ''}: ${type};\n`;
}

/**
 * The text of src/library/image-request.ts for `fields` (SCENE_FIELDS): the
 * coordinates first, then each field in the vocabulary's order, under its wire
 * name.
 */
export function renderImageRequestType(fields) {
  const coordinates = Object.entries(fields).filter(([, spec]) => spec.kind === 'coordinate');
  let body = '';
  body += '  /** Where: the place the camera looks at, in degrees. */\n  coordinates: {\n';
  for (const [, spec] of coordinates) {
    const [min, max] = spec.range;
    body += member(spec.wire.split('.')[1], `${sentence(spec.help)} in degrees, ${min} to ${max}.`, 'number', false, '    ');
  }
  body += '  };\n';
  for (const [name, spec] of Object.entries(fields)) {
    switch (spec.kind) {
      case 'enum':
        body += member(name, `${sentence(spec.help)}: ${listed(quoted(spec.values))}. Left out: '${spec.default}'.`, quoted(spec.values).join(' | '), true, '  ');
        break;
      case 'boolean':
        body += member(name, `${sentence(spec.help)}. Left out: the service decides.`, 'boolean', true, '  ');
        break;
      case 'list':
        body += member(spec.wire, `${sentence(spec.help)}s: at most ${spec.max}, none empty. Left out: none.`, 'readonly string[]', true, '  ');
        break;
      case 'text':
        body += member(name, `${sentence(spec.help)}, not empty.`, 'string', true, '  ');
        break;
      default:
        break;
    }
  }
  return `${HEADER}
/**
 * A generation request, as the service takes it (docs/library.md). Scene
 * settings left out take the built-in defaults; booleans left out are the
 * service's to decide. Written \`as const\`, or with readonly arrays, it is
 * taken as it is. Checked again when it is sent: a value plain JavaScript
 * slips past these types is an InvalidInputError, and nothing is sent.
 */
export interface ImageRequest {
${body}}
`;
}
