// `aerial view` without a terminal, in-process: refused unless --protocol
// names one (nothing sent), bad flags and inputs in one line with the
// documented exit code, and standard input read with "-". On a real
// pseudo-terminal, each protocol: test/e2e/view.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { jpegInfo } from '../../helpers/sandbox.js';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';
import { blockLines, parseIterm } from '../../helpers/terminal-graphics.js';
import { runCommand } from '../../helpers/terminal.js';

const fixture = useCommandsAgainstSandbox();
const { cli } = fixture;

/** A 640 × 360 JPEG (16:9) of one colour. */
let photo: string;
beforeAll(async () => {
  photo = join(fixture.home.path, 'photo.jpg');
  await sharp({ create: { width: 640, height: 360, channels: 3, background: '#2040d0' } })
    .jpeg()
    .toFile(photo);
});

describe('aerial view without a terminal', () => {
  it('refuses with exit 2 unless --protocol names one, and sends nothing', async () => {
    fixture.sandbox.clearRequests();
    const refused = await cli(['view', photo]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/^error: stdout is not a terminal.*--protocol kitty\|iterm\|sixel\|blocks/m);
    expect(refused.stdout).toBe('');
    const auto = await cli(['view', 'some-id', '--protocol', 'auto']);
    expect(auto.exitCode).toBe(2);
    expect(fixture.sandbox.requests()).toEqual([]);

    const forced = await runCommand(['view', photo, '--protocol', 'blocks', '--width', '12'], { configDir: fixture.home.path });
    expect(forced.exitCode).toBe(0);
    expect(blockLines(forced.stdout)).toEqual(Array(3).fill('\u2580'.repeat(12)));
  });

  it('bad flags and inputs are one line with the documented exit code', async () => {
    const typo = await runCommand(['view', photo, '--protocol', 'kity'], { configDir: fixture.home.path });
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toBe("error: --protocol must be one of auto, kitty, iterm, sixel, blocks; got 'kity' (did you mean kitty?)\n");
    const width = await runCommand(['view', photo, '--protocol', 'blocks', '--width', '0'], { configDir: fixture.home.path });
    expect(width.exitCode).toBe(2);
    expect(width.stderr).toMatch(/--width must be a whole number from 1 to 1000; got '0'/);
    const missing = await runCommand(['view', 'nowhere/photo.jpg', '--protocol', 'blocks'], { configDir: fixture.home.path });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toBe('error: no such file: nowhere/photo.jpg\n');
    const notImage = join(fixture.home.path, 'notes.txt');
    writeFileSync(notImage, 'not an image');
    const unreadable = await runCommand(['view', notImage, '--protocol', 'kitty'], { configDir: fixture.home.path });
    expect(unreadable.exitCode).toBe(2);
    expect(unreadable.stderr).toMatch(/notes\.txt is not an image aerial can read/);
    const unknown = await cli(['view', 'no-such-image-id', '--protocol', 'blocks']);
    expect(unknown.exitCode).toBe(5);
    expect(unknown.stderr).toMatch(/^error: NotFound — image no-such-image-id not found in your history/);
  });

  it('reads standard input with "-"', async () => {
    const result = await runCommand(['view', '-', '--protocol', 'iterm', '--width', '10'], { configDir: fixture.home.path, input: readFileSync(photo) });
    expect(result.exitCode).toBe(0);
    const [image] = parseIterm(result.stdout);
    expect(jpegInfo(image!.data)).toMatchObject({ width: 100, height: 56 });
  });
});
