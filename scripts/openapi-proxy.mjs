#!/usr/bin/env node
// A validating proxy for the GenAerial v1 API: every request that passes
// through it, and every answer, is checked against the OpenAPI document by
// Stoplight Prism's validator (@stoplight/prism-http), while the bytes go
// through untouched. (`prism proxy` itself reads every body that is not JSON
// as text, which breaks the JPEG of a synchronous generation.)
//
//   node scripts/openapi-proxy.mjs --upstream URL [--spec FILE|URL] [--port N] [--host H] [--errors]
//
// --upstream  the service to check: https://api.genaerial.com, or a sandbox
// --spec      the OpenAPI document (default docs/openapi.yaml; a sandbox serves it at /openapi.json)
// --port      default 4020; 0 picks a free port
// --errors    answer a request that breaks the document with 422, and an
//             answer that breaks it with 502, each a problem+json naming the
//             violations; without it, violations are only reported
//
// Point the client at the proxy (AERIAL_BASE_URL=http://127.0.0.1:4020).
// stdout: one JSON line {url} once listening. stderr: one JSON line per
// exchange, {method, path, status, violations: [{side, path, message}]}.
// Ctrl-C stops it. Exit status 1 when the document cannot be read.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createInstance, getHttpOperationsFromSpec } from '@stoplight/prism-http';
import { left, right } from 'fp-ts/lib/Either.js';
import { EnvHttpProxyAgent, request } from 'undici';
import { parse as parseYaml } from 'yaml';

const { values: options } = parseArgs({
  options: {
    upstream: { type: 'string' },
    spec: { type: 'string', default: fileURLToPath(new URL('../docs/openapi.yaml', import.meta.url)) },
    port: { type: 'string', default: '4020' },
    host: { type: 'string', default: '127.0.0.1' },
    errors: { type: 'boolean', default: false },
  },
});
if (!options.upstream) {
  process.stderr.write('error: --upstream is required: the URL of the service to check, such as https://api.genaerial.com\n');
  process.exit(2);
}
const upstream = new URL(options.upstream);

/** Hop-by-hop headers, which a proxy must not pass on (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

async function loadDocument(spec) {
  if (/^https?:/.test(spec)) {
    const answer = await request(spec, { dispatcher });
    if (answer.statusCode !== 200) throw new Error(`GET ${spec} answered ${answer.statusCode}`);
    return answer.body.json();
  }
  return parseYaml(readFileSync(spec, 'utf8'));
}

/** Prism logs through pino; the proxy reports on its own, so the engine's log is dropped. */
const quiet = new Proxy({}, { get: (_target, name) => (name === 'child' ? () => quiet : () => {}) });
const dispatcher = new EnvHttpProxyAgent();

let operations;
try {
  operations = await getHttpOperationsFromSpec(await loadDocument(options.spec));
} catch (error) {
  process.stderr.write(`error: cannot read the OpenAPI document ${options.spec}: ${error.message}\n`);
  process.exit(1);
}

function isJson(contentType) {
  return /^application\/([\w.+-]*\+)?json\b/i.test(contentType ?? '');
}

/** What Prism validates: a JSON body parsed, any other as text, none when empty. */
function bodyForValidation(bytes, contentType) {
  if (bytes.length === 0) return undefined;
  if (isJson(contentType)) {
    try {
      return JSON.parse(bytes.toString('utf8'));
    } catch {
      return bytes.toString('utf8');
    }
  }
  return bytes.toString('latin1');
}

function singleValues(headers) {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value)]));
}

function queryOf(url) {
  const query = {};
  for (const [name, value] of url.searchParams) {
    if (name in query) query[name] = [].concat(query[name], value);
    else query[name] = value;
  }
  return query;
}

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function diagnostics(list, side) {
  // Errors (0) and warnings (1, such as a route the document does not have); hints and information are not violations.
  return list.filter((diagnostic) => diagnostic.severity <= 1).map((diagnostic) => ({ side, path: (diagnostic.path ?? []).join('.'), message: diagnostic.message }));
}

function problem(res, status, title, violations) {
  const body = JSON.stringify({ type: 'https://stoplight.io/prism/errors#VIOLATION', title, status, detail: violations.map((v) => `${v.side} ${v.path}: ${v.message}`).join('; '), violations });
  res.writeHead(status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://proxy.invalid');
  const raw = await readAll(req);
  const headers = singleValues(req.headers);
  const input = {
    method: (req.method ?? 'GET').toLowerCase(),
    // No baseUrl: the document's servers list the public service and the sandbox's default port; any upstream is checked.
    url: { path: url.pathname, query: queryOf(url) },
    headers,
    body: bodyForValidation(raw, headers['content-type']),
  };
  let received;
  let blocked = false;
  const forward = (checked) => () => async () => {
    if (options.errors && diagnostics(checked.validations, 'request').length > 0) {
      // Like `prism proxy --errors`: a request that breaks the document is not sent on.
      blocked = true;
      return right({ statusCode: 422, headers: {}, body: undefined });
    }
    try {
      const target = new URL(url.pathname + url.search, upstream);
      const answer = await request(target, {
        method: req.method,
        headers: Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name))),
        body: raw.length > 0 ? raw : undefined,
        dispatcher,
      });
      received = { statusCode: answer.statusCode, headers: answer.headers, bytes: await readAll(answer.body) };
      const responseHeaders = singleValues(answer.headers);
      return right({ statusCode: answer.statusCode, headers: responseHeaders, body: bodyForValidation(received.bytes, responseHeaders['content-type']) });
    } catch (error) {
      return left(error);
    }
  };
  const prism = createInstance(
    { isProxy: true, upstream, upstreamProxy: undefined, checkSecurity: true, validateRequest: true, validateResponse: true, errors: options.errors, mock: { dynamic: false } },
    { logger: quiet, forward },
  );
  const outcome = await prism.request(input, operations)();
  const report = { method: req.method, path: url.pathname, status: received?.statusCode ?? null, violations: [] };
  if (outcome._tag === 'Left') {
    // Prism could not route the request: a path or method the document does not have.
    report.violations.push({ side: 'request', path: '', message: outcome.left.message });
  } else {
    report.violations.push(...diagnostics(outcome.right.validations.input, 'request'));
    if (!blocked) report.violations.push(...diagnostics(outcome.right.validations.output, 'response'));
  }
  process.stderr.write(`${JSON.stringify(report)}\n`);
  if (options.errors && report.violations.length > 0) {
    const onRequest = report.violations.some((violation) => violation.side === 'request');
    problem(res, onRequest ? 422 : 502, onRequest ? 'The request breaks the OpenAPI document' : 'The answer breaks the OpenAPI document', report.violations);
    return;
  }
  if (!received) {
    problem(res, 502, 'The upstream service could not be reached', report.violations);
    return;
  }
  const passOn = Object.fromEntries(Object.entries(received.headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
  res.writeHead(received.statusCode, passOn);
  res.end(received.bytes);
});

server.listen(Number(options.port), options.host, () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}` })}\n`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => process.exit(0)));
