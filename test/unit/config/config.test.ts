import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/lifecycle/errors.js';
import { apiKeyProblem, configShapeProblem, maskKey, parseConfigKey, parseConfigValue, resolveSettings } from '../../../src/config/config.js';
import { validateBaseUrl } from '../../../src/input/flags.js';
import { colorEnabled } from '../../../src/terminal/terminal.js';

describe('resolveSettings precedence', () => {
  const config = {
    profiles: {
      default: { apiKey: 'profile-key-default', baseUrl: 'https://default.example' },
      work: { apiKey: 'profile-key-work', defaults: { zoom: 'High' } },
    },
  };

  it('takes flag over environment over profile over built-in default', () => {
    const env = { AERIAL_API_KEY: 'env-key-1234', AERIAL_BASE_URL: 'https://env.example' };
    expect(resolveSettings({ apiKey: 'flag-key-1234' }, env, config).apiKey).toEqual({ value: 'flag-key-1234', source: 'flag' });
    expect(resolveSettings({}, env, config).apiKey).toEqual({ value: 'env-key-1234', source: 'env' });
    expect(resolveSettings({}, {}, config).apiKey).toEqual({ value: 'profile-key-default', source: 'profile' });
    expect(resolveSettings({}, {}, {}).apiKey).toEqual({ value: undefined, source: 'default' });
    expect(resolveSettings({}, {}, config).sceneDefaults.zoom).toEqual({ value: 'Medium', source: 'default' });
  });

  it('selects the profile by flag, then AERIAL_PROFILE', () => {
    expect(resolveSettings({ profile: 'work' }, {}, config).apiKey.value).toBe('profile-key-work');
    expect(resolveSettings({}, { AERIAL_PROFILE: 'work' }, config).sceneDefaults.zoom).toEqual({ value: 'High', source: 'profile' });
    expect(resolveSettings({ profile: 'default' }, { AERIAL_PROFILE: 'work' }, config).profile).toEqual({ value: 'default', source: 'flag' });
  });

  it('refuses a profile that does not exist, listing the known ones', () => {
    expect(() => resolveSettings({ profile: 'wrok' }, {}, config)).toThrow(/profile 'wrok' does not exist \(profiles: default, work\)/);
  });

  it('treats empty environment variables as unset', () => {
    expect(resolveSettings({}, { AERIAL_API_KEY: '' }, config).apiKey.source).toBe('profile');
  });
});

describe('config keys and values', () => {
  it('accepts kebab and camel spellings of scene defaults', () => {
    expect(parseConfigKey('defaults.aspectRatio').name).toBe('defaults.aspect-ratio');
    expect(parseConfigKey('defaults.aspect-ratio').name).toBe('defaults.aspect-ratio');
    expect(parseConfigKey('api_key').name).toBe('api-key');
    expect(() => parseConfigKey('defaults.colour')).toThrow(/unknown config key 'defaults.colour'; keys: api-key, base-url/);
  });

  it('validates values with the same rules as the flags', () => {
    expect(parseConfigValue(parseConfigKey('defaults.bearing'), 'se')).toBe('SouthEast');
    expect(() => parseConfigValue(parseConfigKey('defaults.zoom'), 'Hihg')).toThrow(/defaults.zoom must be one of .* \(did you mean High\?\)/);
    expect(parseConfigValue(parseConfigKey('defaults.save-image'), 'no')).toBe(false);
    // The words a batch cell takes for a switch, no more and no fewer.
    for (const word of ['true', 'Yes', 'y', '1', 'ON']) expect(parseConfigValue(parseConfigKey('defaults.include-context'), word)).toBe(true);
    for (const word of ['false', 'No', 'n', '0', 'off']) expect(parseConfigValue(parseConfigKey('defaults.preview'), word)).toBe(false);
    expect(() => parseConfigValue(parseConfigKey('defaults.improve-output'), 'maybe')).toThrow(
      "defaults.improve-output must be true or false (or yes/no, y/n, on/off, 1/0); got 'maybe'",
    );
    expect(() => parseConfigValue(parseConfigKey('base-url'), 'ftp://x')).toThrow(UsageError);
  });

  it('normalises base URLs and refuses embedded credentials', () => {
    expect(validateBaseUrl('https://api.example.com/', '--base-url')).toBe('https://api.example.com');
    expect(() => validateBaseUrl('https://user:pw@api.example.com', '--base-url')).toThrow(/must not contain credentials/);
    expect(() => validateBaseUrl('api.example.com', '--base-url')).toThrow(/absolute http\(s\) URL/);
  });

  it('masks keys so they are recognisable but never usable', () => {
    const key = 'sk_live_abcdefghijklmnop';
    expect(maskKey(key)).not.toContain('abcdefghijklmnop');
    expect(maskKey(key)).toMatch(/^sk_l…op \(24 chars\)$/);
    expect(maskKey('short')).toBe('****');
    expect(maskKey(undefined)).toBe('(not set)');
  });
});

describe('API keys a header can carry', () => {
  it('accepts exactly printable ASCII without spaces, and names the first character it refuses by its place (generated keys)', () => {
    const printable = fc.string({ unit: fc.constantFrom(...Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i))), minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(fc.oneof(printable, fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 })), (key) => {
        const chars = [...key];
        const first = chars.findIndex((char) => !/^[!-~]$/.test(char));
        const problem = apiKeyProblem(key);
        if (first < 0) expect(problem).toBeUndefined();
        else expect(problem).toMatch(new RegExp(`\\(U\\+[0-9A-F]{4,6}\\) at character ${first + 1} of ${chars.length}$`));
      }),
      { numRuns: 2000 },
    );
  });

  it('names what a paste brings along unseen', () => {
    expect(apiKeyProblem('abc\u200bdef')).toBe('a zero-width space (U+200B) at character 4 of 7');
    expect(apiKeyProblem('\u201cabc\u201d')).toBe('a typographic quote (U+201C) at character 1 of 5');
    expect(apiKeyProblem('ab\u00a0c')).toBe('a no-break space (U+00A0) at character 3 of 4');
    expect(apiKeyProblem('ab\u001bc')).toBe('a control character (U+001B) at character 3 of 4');
    expect(apiKeyProblem('abcé')).toBe('a character outside printable ASCII (U+00E9) at character 4 of 4');
    expect(apiKeyProblem('a😀')).toBe('a character outside printable ASCII (U+1F600) at character 2 of 2');
  });
});

describe('colour decision', () => {
  it('follows NO_COLOR, FORCE_COLOR, the flag and the terminal', () => {
    expect(colorEnabled({}, true)).toBe(true);
    expect(colorEnabled({}, false)).toBe(false);
    expect(colorEnabled({ NO_COLOR: '1' }, true)).toBe(false);
    expect(colorEnabled({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: '0' }, true)).toBe(false);
    expect(colorEnabled({ FORCE_COLOR: '1' }, true, false)).toBe(false);
    expect(colorEnabled({ TERM: 'dumb' }, true)).toBe(false);
  });
});

describe('hand-edited config files', () => {
  it('reports a value of the wrong type with its path', () => {
    expect(configShapeProblem({ profiles: { default: { apiKey: { nested: true } } } })).toBe('profiles.default.apiKey must be a string');
    expect(configShapeProblem({ profiles: { work: { defaults: { saveImage: 'yes' } } } })).toBe('profiles.work.defaults.saveImage must be a boolean');
    expect(configShapeProblem({ profiles: [] })).toBe('profiles must be an object');
    expect(configShapeProblem([])).toBe('the top level must be an object');
    expect(configShapeProblem({ profiles: { default: { apiKey: 'k', defaults: { zoom: 'High', saveImage: false } } } })).toBeUndefined();
  });

  it('holds stored scene defaults to the flag rules, naming the config key', () => {
    expect(resolveSettings({}, {}, { profiles: { default: { defaults: { zoom: 'high' } } } }).sceneDefaults.zoom.value).toBe('High');
    expect(() => resolveSettings({}, {}, { profiles: { default: { defaults: { zoom: 'Hihg' } } } })).toThrow(
      /^config defaults.zoom \(profile default\) must be one of .*did you mean High\?/,
    );
  });
});
