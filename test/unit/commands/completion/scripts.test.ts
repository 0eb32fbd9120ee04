// Completion scripts: generated from the real commander program, committed in
// completions/ (must equal a fresh generation), covering every command, flag
// and enum value — and actually completing in bash (always), zsh and fish
// (when those shells are installed).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCENE_ENUMS } from '../../../../src/api/enums.js';
import { buildProgram } from '../../../../src/main.js';
import { completionScript, describeCommand, SHELLS, valueFlags, type Shell } from '../../../../src/commands/completion/scripts.js';
import { configKeys } from '../../../../src/config/config.js';
import { ROOT } from '../../../helpers/cli.js';
import { available, command } from '../../../helpers/system-tools.js';

const FILES: Record<Shell, string> = { bash: 'aerial.bash', zsh: '_aerial', fish: 'aerial.fish' };
const program = buildProgram();
const scripts = Object.fromEntries(SHELLS.map((shell) => [shell, completionScript(program, shell)])) as Record<Shell, string>;

function hasShell(name: string): boolean {
  return available(command(name, ['-c', 'exit 0'], `apt-get install ${name}`));
}

/** Every command under the program with its path, e.g. [['generate'], ['config', 'set'], …]. */
function commands(command: Command, path: string[] = []): Array<{ path: string[]; command: Command }> {
  return command.commands.flatMap((sub) => [{ path: [...path, sub.name()], command: sub }, ...commands(sub, [...path, sub.name()])]);
}

describe('committed completion scripts', () => {
  for (const shell of SHELLS) {
    it(`completions/${FILES[shell]} equals a fresh generation from the program`, () => {
      const committed = readFileSync(join(ROOT, 'completions', FILES[shell]), 'utf8');
      expect(committed, `completions/${FILES[shell]} is stale: run npm run build && node scripts/completions.mjs`).toBe(scripts[shell]);
    });
  }
});

describe('coverage of the program', () => {
  const all = commands(program);

  it('knows the commands it must cover (guards against an empty walk)', () => {
    const names = all.map((c) => c.path.join(' '));
    for (const name of ['generate', 'generate-async', 'list', 'delete', 'config', 'config set', 'init', 'completion']) {
      expect(names).toContain(name);
    }
  });

  for (const shell of SHELLS) {
    it(`${shell}: every command, alias and flag appears`, () => {
      const script = scripts[shell];
      for (const { command } of all) {
        for (const name of [command.name(), ...command.aliases()]) expect(script, `${shell} lacks command ${name}`).toMatch(new RegExp(`\\b${name}\\b`));
        for (const option of [...command.options, ...program.options]) {
          const long = option.long!;
          // fish declares flags without their dashes: `-l zoom`, `-s o`.
          const forms = shell === 'fish' ? [`-l ${long.slice(2)}`, option.short && `-s ${option.short.slice(1)}`] : [long, option.short];
          for (const form of forms.filter(Boolean)) expect(script, `${shell} lacks ${form} of ${command.name()}`).toContain(form);
        }
      }
    });

    it(`${shell}: every scene enum value and config key appears`, () => {
      for (const values of Object.values(SCENE_ENUMS)) for (const value of values) expect(scripts[shell]).toMatch(new RegExp(`\\b${value}\\b`));
      for (const key of configKeys()) expect(scripts[shell]).toContain(key.name);
    });
  }

  it('attaches each scene flag to its own values, per command (bash table)', () => {
    for (const [field, values] of Object.entries(SCENE_ENUMS)) {
      const flag = `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      expect(scripts.bash).toContain(`"aerial generate ${flag}"`);
      const line = scripts.bash.split('\n').find((l) => l.includes(`"aerial generate ${flag}"`))!;
      expect(line).toContain(`echo "${values.join(' ')}"`);
    }
  });

  it('no flag takes a value in one command and not in another (the scripts rely on it)', () => {
    const flags = valueFlags(describeCommand(program));
    expect(flags).toContain('--zoom');
    expect(flags).toContain('--output');
    expect(flags).not.toContain('--json');
  });
});

/** Runs bash's completion function for a command line typed so far (the last word is being completed). */
function bashComplete(words: string[], cwd: string): string[] {
  const script = `source ${JSON.stringify(join(ROOT, 'completions', 'aerial.bash'))}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_aerial; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', script], { cwd, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean);
}

describe('bash completes', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aerial-completion-'));
    writeFileSync(join(dir, 'rows.csv'), 'lat,lng\n');
    mkdirSync(join(dir, 'renders'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<[string, string[], string[]]> = [
    ['subcommands by prefix', ['aerial', 'gen'], ['generate', 'generate-async']],
    ['flags of the command being typed', ['aerial', 'generate', '--zo'], ['--zoom']],
    ['enum values after an enum flag', ['aerial', 'generate', '--zoom', ''], ['ExtraLow', 'Low', 'Medium', 'High', 'ExtraHigh']],
    ['enum values by prefix', ['aerial', 'generate', '--zoom', 'Ex'], ['ExtraLow', 'ExtraHigh']],
    ['after --flag= (bash splits at =)', ['aerial', 'generate', '--weather', '=', 'G'], ['GoldenHour']],
    ['past a global option and its value', ['aerial', '--profile', 'work', 'generate', '--bearing', 'North'], ['North', 'NorthEast', 'NorthWest']],
    ['a global option value is not a subcommand', ['aerial', '--profile', 'list', 'ge'], ['generate', 'generate-async', 'get']],
    ['through an alias', ['aerial', 'ls', '--s'], ['--size', '--sort', '--since', '--sandbox']],
    ['nested subcommands and their arguments', ['aerial', 'config', 'set', 'defaults.z'], ['defaults.zoom']],
    ['argument choices', ['aerial', 'completion', ''], ['bash', 'zsh', 'fish']],
    ['file names for file-valued flags', ['aerial', 'generate', '-o', 'r'], ['renders', 'rows.csv']],
    ['nothing for free-form values', ['aerial', 'generate', '--lat', ''], []],
    ['sort criteria, not file names, after list --sort', ['aerial', 'list', '--sort', ''], ['createdAt,desc', 'createdAt,asc']],
    ["a config key's values after the key", ['aerial', 'config', 'set', 'defaults.zoom', ''], ['ExtraLow', 'Low', 'Medium', 'High', 'ExtraHigh']],
    ["a config key's values past an option", ['aerial', 'config', 'set', 'defaults.zoom', '--profile', 'work', 'Ex'], ['ExtraLow', 'ExtraHigh']],
    ['true or false for a switch key', ['aerial', 'config', 'set', 'defaults.save-image', ''], ['true', 'false']],
    ['nothing for a key with free values', ['aerial', 'config', 'set', 'base-url', ''], []],
    ['nothing after the last argument', ['aerial', 'config', 'set', 'defaults.zoom', 'High', ''], []],
    ["the subcommands of the command help is asked about", ['aerial', 'help', 'config', ''], ['set', 'get', 'unset', 'list', 'path']],
    ['the subcommands of batch under help', ['aerial', 'help', 'batch', ''], ['status']],
    ['the commands after help', ['aerial', 'help', 'gen'], ['generate', 'generate-async']],
    ["config's own help command", ['aerial', 'config', 'help', 'u'], ['unset']],
    ['no subcommand after an argument', ['aerial', 'batch', 'rows.csv', 'st'], []],
  ];
  for (const [what, words, expected] of cases) {
    it(what, () => {
      expect(bashComplete(words, dir).sort()).toEqual([...expected].sort());
    });
  }
});

describe.skipIf(!hasShell('fish'))('fish completes', () => {
  const complete = (line: string) => {
    const result = spawnSync('fish', ['--no-config', '-c', `source ${join(ROOT, 'completions', 'aerial.fish')}; complete -C ${JSON.stringify(line)}`], {
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    return result.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]);
  };
  it('subcommands, enum values, nested keys and aliases', () => {
    expect(complete('aerial gen')).toEqual(['generate', 'generate-async']);
    expect(complete('aerial --profile work generate --zoom ').sort()).toEqual([...SCENE_ENUMS.zoom].sort());
    expect(complete('aerial config set defaults.as')).toEqual(['defaults.aspect-ratio']);
    expect(complete('aerial ls --so')).toEqual(['--sort']);
    expect(complete('aerial generate --zoom=Ex').sort()).toEqual(['--zoom=ExtraHigh', '--zoom=ExtraLow']);
  });

  it('sort criteria after list --sort, a key\'s values after config set <key>, subcommands after help <command>', () => {
    expect(complete('aerial list --sort ').sort()).toEqual(['createdAt,asc', 'createdAt,desc']);
    expect(complete('aerial config set defaults.zoom ').sort()).toEqual([...SCENE_ENUMS.zoom].sort());
    expect(complete('aerial config set defaults.preview ').sort()).toEqual(['false', 'true']);
    expect(complete('aerial config set api-key ')).toEqual([]);
    expect(complete('aerial help config ').sort()).toEqual(['get', 'list', 'path', 'set', 'unset']);
    expect(complete('aerial help batch ')).toEqual(['status']);
    expect(complete('aerial help gen')).toEqual(['generate', 'generate-async']);
    expect(complete('aerial batch places.csv st')).toEqual([]);
  });
});

describe.skipIf(!hasShell('zsh'))('zsh', () => {
  it('parses the script', () => {
    const result = spawnSync('zsh', ['-n', join(ROOT, 'completions', '_aerial')], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  /** Types `line` and TAB TAB into an interactive zsh (zpty) with compinit, and returns what it listed. */
  function zshList(line: string): string {
    const fpath = mkdtempSync(join(tmpdir(), 'aerial-zsh-'));
    try {
      writeFileSync(join(fpath, '_aerial'), readFileSync(join(ROOT, 'completions', '_aerial')));
      const driver = `
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z 'PROMPT=""; fpath=(${fpath} $fpath); autoload -U compinit; compinit -u -D; LISTMAX=1000; aerial() { :; }; echo READY'
while zpty -r z chunk; do [[ $chunk == READY* ]] && break; done
zpty -n -w z $'${line}\\t\\t'
local out="" chunk idle=0
while (( idle < 10 )); do
  if zpty -rt z chunk; then out+=$chunk; idle=0; else sleep 0.1; (( idle++ )); fi
done
print -r -- "$out"
zpty -d z`;
      return spawnSync('zsh', ['-f', '-c', driver], { encoding: 'utf8', timeout: 15_000 }).stdout;
    } finally {
      rmSync(fpath, { recursive: true, force: true });
    }
  }

  it('lists enum values and nested config keys in a real interactive zsh', () => {
    const zooms = zshList('aerial generate --zoom ');
    for (const zoom of SCENE_ENUMS.zoom) expect(zooms).toContain(zoom);
    expect(zshList('aerial config set defaults.a')).toMatch(/defaults\.a(ngle|spect-ratio)/);
  });

  it('lists sort criteria, a config key\'s values and help\'s subcommands in a real interactive zsh', () => {
    const sorts = zshList('aerial list --sort ');
    expect(sorts).toContain('createdAt,desc');
    expect(sorts).not.toContain('package.json');
    const zooms = zshList('aerial config set defaults.zoom ');
    for (const zoom of SCENE_ENUMS.zoom) expect(zooms).toContain(zoom);
    expect(zooms).not.toContain('defaults.angle');
    const subcommands = zshList('aerial help config ');
    for (const name of ['set', 'get', 'unset', 'list', 'path']) expect(subcommands).toMatch(new RegExp(`\\b${name}\\b`));
    expect(subcommands).not.toContain('generate');
  });
});
