// Help laid out for a narrow terminal: prose reflowed, example commands
// continued with a backslash (still one shell command), other lines wrapped
// under themselves; what fits is left alone.
import { describe, expect, it } from 'vitest';
import { fitHelpText } from '../../../src/cli/help-layout.js';

describe('fitHelpText', () => {
  it('leaves text that fits exactly as it is', () => {
    const text = 'Usage: aerial list [options]\n\nOptions:\n  --all  walk every page\n';
    expect(fitHelpText(text, 40)).toBe(text);
  });

  it('reflows a paragraph with a line too long, and only that paragraph', () => {
    const text = 'Short one.\n\nThe manifest gets a line per row event: started just before a row\nis sent, then done or failed.\n';
    expect(fitHelpText(text, 30)).toBe(
      'Short one.\n\nThe manifest gets a line per\nrow event: started just before\na row is sent, then done or\nfailed.\n',
    );
  });

  it('continues a long example with " \\" under its first word, and moves its comment to a line of its own', () => {
    expect(fitHelpText('  $ aerial batch places.csv --shard 2/4 --json > summary.json     # runner 2 of 4', 40).split('\n')).toEqual([
      '  $ aerial batch places.csv --shard \\',
      '      2/4 --json > summary.json',
      '      # runner 2 of 4',
    ]);
    // A comment that fits stays, with its padding taken out.
    expect(fitHelpText('  $ aerial config set api-key                 # hidden prompt', 50)).toBe('  $ aerial config set api-key # hidden prompt');
  });

  it('keeps the indent of a line already continuing a command', () => {
    const text = '  $ aerial generate-async --listen --listen-port 8787 \\\n      --public-url https://tunnel.example.app -o westminster.jpg';
    expect(fitHelpText(text, 50).split('\n')).toEqual([
      '  $ aerial generate-async --listen --listen-port \\',
      '      8787 \\',
      '      --public-url https://tunnel.example.app -o \\',
      '      westminster.jpg',
    ]);
  });

  it('wraps any other indented line under itself; a word too long keeps its own line', () => {
    expect(fitHelpText('    → --listen-port 8787 --public-url https://<words>.trycloudflare.com', 40).split('\n')).toEqual([
      '    → --listen-port 8787 --public-url',
      '      https://<words>.trycloudflare.com',
    ]);
  });
});
