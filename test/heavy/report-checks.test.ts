// The HTML reports checked by tools nobody here wrote: the Nu HTML Checker
// (vnu-jar, on Java) for valid HTML, and axe-core, run inside Debian's
// chromium on the page as loaded from file://, in the light and the dark
// colour scheme, for accessibility (no serious or critical violation). The
// reports are those of real runs against the sandbox: a batch's (rows done and
// failed), batch status's (rows missing, shown as skipped) and export's
// (images with the time they were made).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { chromiumAvailable, openFile } from '../helpers/browser.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';
import { available, command } from '../helpers/system-tools.js';

const require = createRequire(import.meta.url);

let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

const REPORTS = ['out/report.html', 'status/report.html', 'backup/index.html'];

beforeAll(async () => {
  const cli = (args: string[]) => runCli(args, { configDir: home.path, env: sandbox.env(), timeout: 60_000 });
  writeFileSync(join(home.path, 'places.csv'), 'lat,lng,tags\n48.8584,2.2945,landmark;paris\n40.6892,-74.0445,landmark\n35.6586,139.7454,tokyo\n95,10,broken\n');
  // Shard 1 of 2, with an invalid row: done and failed rows.
  const batch = await cli(['batch', 'places.csv', '--shard', '1/2', '--resolution', 'HD', '--skip-invalid', '--output-template', 'out/{row}.jpg', '--report', 'out/report.html']);
  expect(batch.stderr).toContain('Report: out/report.html');
  // Shard 2 never ran: its rows are missing, shown as skipped.
  const status = await cli(['batch', 'status', 'places.csv', '--resolution', 'HD', '--output-template', 'out/{row}.jpg', '--report', 'status/report.html']);
  expect(status.stderr).toContain('Report: status/report.html');
  const exported = await cli(['export', 'backup']);
  expect(exported.exitCode, exported.stderr).toBe(0);
}, 120_000);

interface VnuMessage {
  type: string;
  subType?: string;
  message: string;
  extract?: string;
}

describe.skipIf(!available(command('java', ['-version'], 'apt-get install default-jre-headless')))('the Nu HTML Checker', () => {
  it('finds no error, and no warning but one about its own reading of file: URLs, in any report', () => {
    const jar = require.resolve('vnu-jar/build/dist/vnu.jar');
    const files = REPORTS.map((report) => join(home.path, report));
    const result = spawnSync('java', ['-jar', jar, '--format', 'json', '--also-check-svg', ...files], { encoding: 'utf8', timeout: 120_000 });
    // vnu prints its findings on stderr, as JSON.
    const { messages } = JSON.parse(result.stderr) as { messages: VnuMessage[] };
    // vnu holds a thumbnail's relative URL to the policy as if the page were not at a file: URL; chromium,
    // which opens the page from file://, loads every thumbnail under that very policy (report.test.ts).
    const fileUrlQuirk = (m: VnuMessage) => m.type === 'info' && m.subType === 'warning' && /^Resource violates Content Security Policy \(meta tag\): image “[^”]*\.thumbnails\//.test(m.message);
    expect(messages.filter((m) => m.type === 'error')).toEqual([]);
    expect(messages.filter((m) => !fileUrlQuirk(m)).map((m) => `${m.type}${m.subType ? `/${m.subType}` : ''}: ${m.message} (${m.extract ?? ''})`)).toEqual([]);
    expect(result.status).toBe(0);
  }, 150_000);
});

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

describe.skipIf(!chromiumAvailable())('axe-core in chromium', () => {
  const axeSource = require('axe-core').source as string;
  for (const report of REPORTS) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`${report}, ${colorScheme}: no serious or critical violation`, async () => {
        const opened = await openFile(join(home.path, report));
        try {
          await opened.page.emulateMedia({ colorScheme });
          // Evaluated through the DevTools protocol, which the report's Content-Security-Policy does not govern.
          await opened.page.evaluate(axeSource);
          const violations = (await opened.page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as AxeViolation[];
          const grave = violations
            .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
            .map((violation) => `${violation.impact} ${violation.id}: ${violation.help} — ${violation.nodes.length} × ${JSON.stringify(violation.nodes[0]?.target)} ${violation.nodes[0]?.failureSummary ?? ''}`);
          expect(grave).toEqual([]);
          expect(opened.errors).toEqual([]);
        } finally {
          await opened.close();
        }
      }, 60_000);
    }
  }
});
