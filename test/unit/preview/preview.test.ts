// The terminal image encoders and the protocol detection, as pure functions:
// what they write is parsed back (test/helpers/terminal-graphics.ts).
import { describe, expect, it } from 'vitest';
import { halfBlocks, itermSequence, kittySequence, quantize, sixelSequence, tmuxPassthrough, xterm256 } from '../../../src/preview/encoders.js';
import { colorDepth, detectGraphics } from '../../../src/preview/terminal.js';
import { fitColumns } from '../../../src/preview/picture.js';
import { blockLines, parseIterm, parseKitty, parseSixel } from '../../helpers/terminal-graphics.js';

/** An image of horizontal stripes: red, green, blue, white, repeating every `stripe` rows. */
function stripes(width: number, height: number, stripe = 1): Buffer {
  const colors = [
    [255, 0, 0],
    [0, 255, 0],
    [0, 0, 255],
    [255, 255, 255],
  ];
  const rgb = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    const color = colors[Math.floor(y / stripe) % colors.length]!;
    for (let x = 0; x < width; x++) rgb.set(color, (y * width + x) * 3);
  }
  return rgb;
}

describe('kitty', () => {
  it('splits the payload into chunks of at most 4096 characters, m=1 on all but the last', () => {
    const png = Buffer.alloc(10_000, 7);
    const sequence = kittySequence(png, 42);
    const [image] = parseKitty(sequence);
    expect(image!.data.equals(png)).toBe(true);
    expect(image!.chunks).toBe(Math.ceil(png.toString('base64').length / 4096));
    expect(Object.fromEntries(image!.control)).toMatchObject({ a: 'T', f: '100', c: '42', q: '2', m: '1' });
  });

  it('a payload of one chunk is one APC with m=0', () => {
    const [image] = parseKitty(kittySequence(Buffer.from('tiny'), 3));
    expect(image!.chunks).toBe(1);
    expect(image!.control.get('m')).toBe('0');
  });
});

describe('iTerm2', () => {
  it('carries the file, its size and the width in cells', () => {
    const jpeg = Buffer.from([0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]);
    const [image] = parseIterm(itermSequence(jpeg, 30, 'liberty.jpg'));
    expect(image!.data.equals(jpeg)).toBe(true);
    expect(Object.fromEntries(image!.args)).toMatchObject({ size: '7', width: '30', inline: '1', preserveAspectRatio: '1' });
    expect(Buffer.from(image!.args.get('name')!, 'base64').toString()).toBe('liberty.jpg');
  });
});

describe('sixel', () => {
  it('has raster attributes of the size given, a palette, and bands of six rows no wider than the image', () => {
    const [image] = parseSixel(sixelSequence(stripes(37, 25), 37, 25));
    expect(image).toEqual({ width: 37, height: 25, colors: 4, bands: 5 });
  });

  it('reduces a photo-like image to at most 256 colours', () => {
    const width = 64;
    const height = 64;
    const rgb = Buffer.alloc(width * height * 3);
    for (let i = 0; i < width * height; i++) rgb.set([(i * 7) & 255, (i * 13) & 255, (i * 29) & 255], i * 3);
    const { indices, palette } = quantize(rgb, width * height);
    expect(palette.length).toBeLessThanOrEqual(256);
    expect(palette.length).toBeGreaterThan(200);
    expect(Math.max(...indices)).toBeLessThan(palette.length);
    expect(parseSixel(sixelSequence(rgb, width, height))[0]).toMatchObject({ width, height, bands: 11 });
  });

  it('keeps exact colours when there are few', () => {
    const { palette } = quantize(stripes(4, 4), 16);
    expect(palette.map((color) => color.join(','))).toEqual(expect.arrayContaining(['255,0,0', '0,255,0', '0,0,255', '255,255,255']));
  });
});

describe('half-blocks', () => {
  it('makes height/2 lines of exactly the width, each ending in a reset', () => {
    const text = halfBlocks(stripes(9, 6), 9, 6, 'truecolor');
    expect(blockLines(text)).toEqual(Array(3).fill('\u2580'.repeat(9)));
    expect(text.split('\n').filter(Boolean).every((line) => line.endsWith('\x1b[0m'))).toBe(true);
    // Top pixel red in front, bottom pixel green behind.
    expect(text.startsWith('\x1b[38;2;255;0;0;48;2;0;255;0m\u2580\u2580')).toBe(true);
  });

  it('uses the 256-colour palette when there is no 24-bit colour', () => {
    const text = halfBlocks(stripes(2, 2), 2, 2, '256');
    expect(text).toBe(`\x1b[38;5;196;48;5;46m\u2580\u2580\x1b[0m\n`);
    expect(xterm256(0, 0, 0)).toBe(16);
    expect(xterm256(255, 255, 255)).toBe(231);
    expect(xterm256(128, 128, 128)).toBe(244);
  });
});

describe('sizing', () => {
  it('keeps the columns asked unless the rows would not hold the image', () => {
    // 16:9 at 80 columns is 80 × 9/16 / 2 = 22.5 rows.
    expect(fitColumns(1920, 1080, 80)).toBe(80);
    expect(fitColumns(1920, 1080, 80, 30)).toBe(80);
    expect(fitColumns(1920, 1080, 80, 20)).toBe(71);
    expect(fitColumns(100, 10_000, 80, 1)).toBe(1);
  });
});

describe('protocol detection', () => {
  const none = { TERM: 'xterm-256color' };
  const never = () => false;
  const always = () => true;
  it.each([
    [{ ...none, KITTY_WINDOW_ID: '1' }, 'kitty'],
    [{ TERM: 'xterm-kitty' }, 'kitty'],
    [{ TERM: 'xterm-ghostty', TERM_PROGRAM: 'ghostty' }, 'kitty'],
    [{ ...none, TERM_PROGRAM: 'iTerm.app' }, 'iterm'],
    [{ ...none, LC_TERMINAL: 'iTerm2' }, 'iterm'],
    [{ ...none, TERM_PROGRAM: 'WezTerm' }, 'iterm'],
    [{ TERM: 'foot' }, 'sixel'],
    [{ TERM: 'mlterm' }, 'sixel'],
    [none, 'blocks'],
    [{}, 'blocks'],
  ])('%o → %s', (env, protocol) => {
    expect(detectGraphics(env, never).protocol).toBe(protocol);
  });

  it('inside tmux: the outer terminal through passthrough when tmux allows it, else half-blocks', () => {
    const env = { TERM: 'tmux-256color', TMUX: '/tmp/tmux-0/default,1,0', KITTY_WINDOW_ID: '3', TERM_PROGRAM: 'tmux' };
    expect(detectGraphics(env, always)).toMatchObject({ protocol: 'kitty', passthrough: 'tmux' });
    expect(detectGraphics(env, never)).toMatchObject({ protocol: 'blocks' });
    expect(detectGraphics({ TERM: 'tmux-256color', TMUX: 'x' }, always).protocol).toBe('blocks');
  });

  it('inside GNU screen: half-blocks', () => {
    expect(detectGraphics({ TERM: 'screen-256color', STY: '1.pts', KITTY_WINDOW_ID: '1' }, always).protocol).toBe('blocks');
  });

  it('colour depth from COLORTERM and the terminals known for 24-bit colour', () => {
    expect(colorDepth({ COLORTERM: 'truecolor' })).toBe('truecolor');
    expect(colorDepth({ COLORTERM: '24bit' })).toBe('truecolor');
    expect(colorDepth({ TERM: 'xterm-direct' })).toBe('truecolor');
    expect(colorDepth({ TERM: 'xterm-256color' })).toBe('256');
    expect(colorDepth({ TERM: 'xterm-256color', TERM_PROGRAM: 'Apple_Terminal' })).toBe('256');
  });

  it("tmux's passthrough doubles every ESC inside", () => {
    expect(tmuxPassthrough('\x1b_Ga=T;x\x1b\\')).toBe('\x1bPtmux;\x1b\x1b_Ga=T;x\x1b\x1b\\\x1b\\');
  });
});
