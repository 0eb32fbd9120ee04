// The same property as test/property/request.test.ts, end to end: real command lines run
// through bin/aerial.js against a server that records what it receives. A
// refused command line exits 2 with the in-process builder's message and sends
// nothing; an accepted one sends exactly the body the builder (and the model)
// produce, and the spec's schema accepts it. Spawning costs ~0.15 s, so the
// bulk of the cases run in-process and this file runs a few dozen.
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../../src/lifecycle/errors.js';
import { generationRequestSchema } from '../../src/api/schema.js';
import { resolveSettings } from '../../src/config/config.js';
import { buildGenerationRequest } from '../../src/input/scene-request.js';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { answerJpeg, leftovers, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';
import { expectedBody, invalidFlags, sceneArgv, sceneCase, sceneInput, type SceneCase } from '../property/scene-model.js';
import { Terminal } from '../../src/terminal/terminal.js';
import { CapturedOutput } from '../helpers/terminal.js';

const KEY = 'sk_test_property_argv_31f9aa';
registerSecret(KEY);
const defaults = resolveSettings({}, {}, {}).sceneDefaults;
/** PROPERTY_SPAWNS=200 for a long hunt; the default keeps the suite quick. */
const SPAWNS = Number(process.env.PROPERTY_SPAWNS) || 0;
const runs = (quick: number) => SPAWNS || quick;
const timeout = (quick: number) => 30_000 + runs(quick) * 1000;

let server: HostileServer;
let config: ReturnType<typeof tempDir>;
let work: ReturnType<typeof tempDir>;

beforeAll(async () => {
  server = await startHostileServer();
  server.respond(answerJpeg);
  config = tempDir();
  work = tempDir('aerial-property-out-');
});
afterAll(async () => {
  await server.close();
  config.remove();
  work.remove();
});

/** The line the CLI writes for `error`, rendered by the terminal it runs with. */
function renderedError(error: CliError): string {
  const stderr = new CapturedOutput();
  new Terminal({ stdout: new CapturedOutput(), stderr, stdin: new PassThrough(), env: {} }).error(error);
  return stderr.text();
}

async function runScene(scene: SceneCase) {
  server.reset();
  const argv = ['generate', ...sceneArgv(scene), '-o', 'out.jpg', '--force'];
  const result = await runCli(argv, {
    configDir: config.path,
    cwd: work.path,
    env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url },
  });
  let built: unknown;
  let refusal: CliError | undefined;
  try {
    built = buildGenerationRequest(sceneInput(scene), defaults);
  } catch (error) {
    refusal = error as CliError;
  }
  return { argv, result, built, refusal };
}

describe('aerial generate over generated command lines (spawned)', () => {
  it('a refused command line exits 2 with one line naming the flag, and nothing reaches the server', async () => {
    await fc.assert(
      fc.asyncProperty(
        sceneCase().filter((scene) => invalidFlags(scene).length > 0),
        async (scene) => {
          const { argv, result, refusal } = await runScene(scene);
          expect(refusal, `the builder refuses ${JSON.stringify(argv)}`).toBeInstanceOf(CliError);
          expect(result.exitCode, result.stderr).toBe(ExitCode.Usage);
          // What reaches the terminal is the refusal as the terminal renders it: its printable form (a tab typed into a
          // flag shows as a space), led by its code where the code says more than "usage" (PlaceNotFound).
          expect(result.stderr).toBe(renderedError(refusal!));
          expect(result.stdout).toBe('');
          expect(server.requests).toEqual([]);
          expect(leftovers(work.path).filter((name) => name !== 'out.jpg')).toEqual([]);
        },
      ),
      { numRuns: runs(15) },
    );
  }, timeout(15));

  it('an accepted command line sends exactly the documented body, once, and the schema accepts it', async () => {
    await fc.assert(
      fc.asyncProperty(
        sceneCase().filter((scene) => invalidFlags(scene).length === 0),
        async (scene) => {
          const { argv, result, built, refusal } = await runScene(scene);
          expect(refusal, `the builder accepts ${JSON.stringify(argv)}`).toBeUndefined();
          expect(result.exitCode, result.stderr).toBe(0);
          expect(server.requests).toHaveLength(1);
          const sent = server.requests[0]!;
          expect(sent.method).toBe('POST');
          expect(sent.url).toBe('/api/external/v1/image-generation');
          expect(sent.headers['content-type']).toBe('application/json');
          const body = JSON.parse(sent.body) as unknown;
          expect(generationRequestSchema().safeParse(body).success).toBe(true);
          expect(body).toEqual(JSON.parse(JSON.stringify(built)));
          expect(body).toEqual(expectedBody(scene));
          expect(leftovers(work.path)).toEqual(['out.jpg']);
        },
      ),
      { numRuns: runs(20) },
    );
  }, timeout(20));
});
